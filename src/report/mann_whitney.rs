//! The Mann-Whitney U test (Wilcoxon rank-sum) of two samples of elapsed times.
//!
//! Why this test: latency distributions are skewed and long-tailed, so a t-test on means is dominated by a few
//! outliers; U compares whole distributions by ranks, assumes no shape, and its statistic is directly the
//! probability that a request of B is slower than one of A. The normal approximation with the tie correction
//! is accurate for the sample sizes compare uses (up to 10,000 a side) and handles the many ties of whole-ms
//! JTL times.

use serde::Serialize;

/// The outcome of the test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MannWhitney {
    /// Size of sample A.
    pub n_a: u64,
    /// Size of sample B.
    pub n_b: u64,
    /// U of B: the number of pairs (a, b) with b > a, ties counting one half.
    pub u_b: f64,
    /// The standardised statistic (continuity- and tie-corrected); positive when B tends to be slower.
    pub z: f64,
    /// The two-sided p-value of "A and B come from the same distribution".
    pub p_value: f64,
    /// The probability of superiority: P(a request of B is slower than one of A), ties counting one half.
    /// 0.5 means no tendency either way.
    pub prob_b_slower: f64,
}

/// Tests `a` against `b`; `None` when either is empty.
pub fn mann_whitney(a: &[u64], b: &[u64]) -> Option<MannWhitney> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let mut all: Vec<(u64, bool)> = a.iter().map(|&v| (v, false)).chain(b.iter().map(|&v| (v, true))).collect();
    all.sort_unstable_by_key(|&(v, _)| v);
    let (na, nb, n) = (a.len() as f64, b.len() as f64, all.len() as f64);
    let mut rank_sum_b = 0.0;
    let mut ties = 0.0;
    let mut i = 0;
    while i < all.len() {
        let j = i + all[i..].iter().take_while(|(v, _)| *v == all[i].0).count();
        let t = (j - i) as f64;
        // Tied values share the mean of the ranks i+1..=j.
        let rank = (i + 1 + j) as f64 / 2.0;
        rank_sum_b += rank * all[i..j].iter().filter(|(_, in_b)| *in_b).count() as f64;
        ties += t * t * t - t;
        i = j;
    }
    let u_b = rank_sum_b - nb * (nb + 1.0) / 2.0;
    let mean = na * nb / 2.0;
    let variance = if n > 1.0 { na * nb / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0))) } else { 0.0 };
    let diff = u_b - mean;
    let z = if variance <= 0.0 || diff.abs() <= 0.5 { 0.0 } else { (diff - 0.5 * diff.signum()) / variance.sqrt() };
    Some(MannWhitney {
        n_a: a.len() as u64,
        n_b: b.len() as u64,
        u_b,
        z,
        p_value: libm::erfc(z.abs() / std::f64::consts::SQRT_2).min(1.0),
        prob_b_slower: u_b / (na * nb),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal to 12 significant digits.
    fn close(got: f64, want: f64) {
        assert!((got - want).abs() <= 1e-12 * want.abs().max(1e-300), "got {got}, want {want}");
    }

    #[test]
    fn separated_samples() {
        // Reference values from the textbook formulas (asymptotic, continuity- and tie-corrected, as in SciPy's
        // `mannwhitneyu(method="asymptotic")`), z and p = erfc(z / sqrt 2) worked out in double precision.
        let t = mann_whitney(&[1, 2, 3, 4, 5], &[6, 7, 8, 9, 10]).unwrap();
        assert_eq!((t.u_b, t.prob_b_slower), (25.0, 1.0));
        close(t.z, 2.506_718_245_762_048_7);
        close(t.p_value, 0.012_185_780_355_344_818);
        let reversed = mann_whitney(&[6, 7, 8, 9, 10], &[1, 2, 3, 4, 5]).unwrap();
        assert_eq!(reversed.u_b, 0.0);
        close(reversed.z, -2.506_718_245_762_048_7);
        close(reversed.p_value, 0.012_185_780_355_344_818);
    }

    #[test]
    fn ties() {
        let t = mann_whitney(&[1, 1, 2, 2, 3], &[2, 3, 3, 4, 4, 4]).unwrap();
        assert_eq!(t.u_b, 27.0);
        close(t.z, 2.164_528_859_864_239_6);
        close(t.p_value, 0.030_423_784_148_462_74);
        close(t.prob_b_slower, 0.9);
    }

    #[test]
    fn identical_and_degenerate() {
        let same = mann_whitney(&[5, 1, 3], &[3, 5, 1]).unwrap();
        assert_eq!((same.z, same.p_value, same.prob_b_slower), (0.0, 1.0, 0.5));
        let constant = mann_whitney(&[7; 10], &[7; 20]).unwrap();
        assert_eq!((constant.z, constant.p_value), (0.0, 1.0));
        assert!(mann_whitney(&[], &[1]).is_none());
    }

    #[test]
    fn erfc_known_values() {
        // erfc(x) = 1 - erf(x); the reference values to 15 digits.
        for (x, want) in [
            (0.0, 1.0),
            (0.5, 0.479_500_122_186_953_5),
            (1.0, 0.157_299_207_050_285_13),
            (-1.0, 1.842_700_792_949_715),
            (3.0, 2.209_049_699_858_544e-5),
        ] {
            close(libm::erfc(x), want);
        }
    }
}
