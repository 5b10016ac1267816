//! planrun's template functions and filters. Random ones draw from the rendering virtual user's generator.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use minijinja::value::Value;
use minijinja::{Environment, Error, ErrorKind, State};
use rand::{Rng, RngCore};
use rand_chacha::ChaCha8Rng;
use sha2::Digest;

use super::scope::{Scope, SELF_KEY};
use crate::segment::Turns;

const ALPHANUMERIC: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/// Longest string a random function will make: a guard against template bombs.
const MAX_LEN: usize = 1 << 20;

/// How `counter()` values are dealt to a segment of a run: the `k`-th call of a counter (from 0) in this
/// process gives the whole run's `turns.nth(k) + 1`; the whole run's values are 1, 2, 3...
#[derive(Debug, Default)]
pub(super) struct CounterDeal(Mutex<Turns>);

impl CounterDeal {
    pub(super) fn set(&self, turns: Turns) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = turns;
    }

    fn value(&self, k: u64) -> u64 {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).nth(k).wrapping_add(1)
    }
}

pub(super) fn register(env: &mut Environment<'static>, deal: Arc<CounterDeal>) {
    let counters: Arc<Mutex<HashMap<String, Arc<AtomicU64>>>> = Arc::default();
    env.add_function("random_int", |s: &State, a: i64, b: i64| {
        if a > b {
            return Err(invalid(format!("random_int({a}, {b}): the first bound must not exceed the second")));
        }
        with_rng(s, |r| random_int(r, a, b))
    });
    env.add_function("random_float", |s: &State, a: f64, b: f64| {
        check_float_range(a, b)?;
        with_rng(s, |r| r.random_range(a..b))
    });
    env.add_function("random_digits", |s: &State, n: usize| {
        check_len("random_digits", n)?;
        with_rng(s, |r| random_digits(r, n))
    });
    env.add_function("random_string", |s: &State, n: usize, alphabet: Option<&str>| {
        check_len("random_string", n)?;
        if alphabet == Some("") {
            return Err(invalid("random_string: the alphabet is empty".into()));
        }
        with_rng(s, |r| random_string(r, n, alphabet))
    });
    env.add_function("random_choice", |s: &State, list: Value| {
        let len = list.len().ok_or_else(|| invalid("random_choice expects a list".into()))?;
        if len == 0 {
            return Err(invalid("random_choice: the list is empty".into()));
        }
        let i = with_rng(s, |r| r.random_range(0..len))?;
        list.get_item(&Value::from(i))
    });
    env.add_function("uuid", |s: &State| with_rng(s, random_uuid));
    env.add_function("now_ms", || {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
    });
    env.add_function("timestamp", |format: Option<String>| timestamp(format.as_deref()));
    env.add_function("counter", move |name: String| {
        let c = counters.lock().unwrap_or_else(|e| e.into_inner()).entry(name).or_default().clone();
        deal.value(c.fetch_add(1, Ordering::Relaxed))
    });
    env.add_function("env", |name: String, default: Option<String>| {
        // The standard library may panic on these names; no variable can have one.
        let value = if name.is_empty() || name.contains(['=', '\0']) { None } else { std::env::var(&name).ok() };
        value.or(default).ok_or_else(|| invalid(format!("env({name:?}): not set and no default given")))
    });
    env.add_filter("base64", |v: String| base64::engine::general_purpose::STANDARD.encode(v.as_bytes()));
    env.add_filter("sha256", |v: String| {
        sha2::Sha256::digest(v.as_bytes()).iter().map(|b| format!("{b:02x}")).collect::<String>()
    });
}

fn with_rng<R>(state: &State, f: impl FnOnce(&mut ChaCha8Rng) -> R) -> Result<R, Error> {
    let scope = state.lookup(SELF_KEY).ok_or_else(|| invalid("random functions need a scope".into()))?;
    let scope = scope.downcast_object_ref::<Scope>().ok_or_else(|| invalid("random functions need a scope".into()))?;
    Ok(scope.with_rng(f))
}

/// `random_int(a, b)`; the template function and the fast path both draw through here.
pub(super) fn random_int(rng: &mut ChaCha8Rng, a: i64, b: i64) -> i64 {
    rng.random_range(a..=b)
}

/// `random_digits(n)`.
pub(super) fn random_digits(rng: &mut ChaCha8Rng, n: usize) -> String {
    let mut out = String::with_capacity(n);
    random_digits_into(rng, n, &mut out);
    out
}

/// `random_digits(n)`, appended to `out`.
pub(super) fn random_digits_into(rng: &mut ChaCha8Rng, n: usize, out: &mut String) {
    random_picked(rng, &DIGITS, n, out);
}

/// `random_string(n[, alphabet])`; the alphabet is not empty.
pub(super) fn random_string(rng: &mut ChaCha8Rng, n: usize, alphabet: Option<&str>) -> String {
    let mut out = String::with_capacity(n);
    random_string_into(rng, n, alphabet, &mut out);
    out
}

/// `random_string(n[, alphabet])`, appended to `out`.
pub(super) fn random_string_into(rng: &mut ChaCha8Rng, n: usize, alphabet: Option<&str>, out: &mut String) {
    match alphabet {
        None => random_picked(rng, &ALPHANUMERIC_PICKS, n, out),
        Some(a) if a.is_ascii() => random_from(rng, a.as_bytes(), n, out),
        Some(a) => {
            let chars: Vec<char> = a.chars().collect();
            out.extend((0..n).map(|_| chars[rng.random_range(0..chars.len())]));
        }
    }
}

/// `uuid()`: a version 4 UUID from the user's generator.
pub(super) fn random_uuid(rng: &mut ChaCha8Rng) -> String {
    let bytes: [u8; 16] = rng.random();
    uuid::Builder::from_random_bytes(bytes).into_uuid().to_string()
}

/// `n` characters drawn uniformly from an ASCII alphabet of at most 256 characters, from random bytes
/// drawn in bulk: a byte `b` picks `alphabet[(b * len) >> 8]`, and the bytes whose `(b * len) & 255` falls
/// below `256 % len` are skipped so that every character is equally likely (Lemire's method, on bytes: a
/// multiplication per character instead of a division).
///
/// [`random_picked`] draws the same characters from the same bytes through a table made once per alphabet.
pub(super) fn random_from(rng: &mut ChaCha8Rng, alphabet: &[u8], n: usize, out: &mut String) {
    let pick = |i: usize| char::from(alphabet[i]);
    if alphabet.len() > 256 {
        out.extend((0..n).map(|_| pick(rng.random_range(0..alphabet.len()))));
        return;
    }
    let len = alphabet.len() as u16;
    let skip_below = 256 % len;
    out.reserve(n);
    let mut left = n;
    let mut pool = [0u8; 32];
    let mut picked = [0u8; 32];
    while left > 0 {
        // A few bytes more than needed, for the skipped ones.
        let pool = &mut pool[..pool_len(left)];
        rng.fill_bytes(pool);
        let mut k = 0;
        for &b in pool.iter() {
            let m = u16::from(b) * len;
            if m & 0xff >= skip_below && k < left {
                picked[k] = alphabet[usize::from(m >> 8)];
                k += 1;
            }
        }
        out.push_str(std::str::from_utf8(&picked[..k]).expect("an ASCII alphabet gives ASCII text"));
        left -= k;
    }
}

/// How many random bytes [`random_from`] draws at once when `left` characters are still to pick.
fn pool_len(left: usize) -> usize {
    (left + left / 8 + 1).min(32)
}

/// What each random byte gives in [`random_from`] for one alphabet: its character, or [`Picks::SKIP`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Picks([u8; 256]);

impl Picks {
    /// Not ASCII, so never a character of the alphabet.
    const SKIP: u8 = 0x80;

    /// The table of an ASCII alphabet of 1 to 256 characters; `None` for any other.
    pub(super) const fn new(alphabet: &[u8]) -> Option<Picks> {
        if alphabet.is_empty() || alphabet.len() > 256 || !alphabet.is_ascii() {
            return None;
        }
        let len = alphabet.len() as u16;
        let skip_below = 256 % len;
        let mut table = [Self::SKIP; 256];
        let mut b = 0;
        while b < 256 {
            let m = b as u16 * len;
            if m & 0xff >= skip_below {
                table[b] = alphabet[(m >> 8) as usize];
            }
            b += 1;
        }
        Some(Picks(table))
    }

    /// The characters of its alphabet (each as often as random bytes give it).
    pub(super) fn chars(&self) -> impl Iterator<Item = u8> + '_ {
        self.0.iter().copied().filter(|&c| c != Self::SKIP)
    }
}

const DIGITS: Picks = match Picks::new(b"0123456789") {
    Some(p) => p,
    None => panic!("the digits are an ASCII alphabet"),
};

const ALPHANUMERIC_PICKS: Picks = match Picks::new(ALPHANUMERIC.as_bytes()) {
    Some(p) => p,
    None => panic!("ALPHANUMERIC is an ASCII alphabet"),
};

/// [`random_from`] through the alphabet's table: the same bytes drawn, the same characters picked, without
/// a branch per byte.
pub(super) fn random_picked(rng: &mut ChaCha8Rng, picks: &Picks, n: usize, out: &mut String) {
    out.reserve(n);
    let mut left = n;
    let mut picked = [0u8; 32];
    while left > 0 {
        let len = pool_len(left);
        // `fill_bytes` of `len` bytes takes whole words from the generator, in turn, lowest byte first, and
        // drops the rest of the last one: the same words are taken here, each byte looked up as it comes.
        let mut pool = [0u8; 32];
        for chunk in pool.chunks_exact_mut(4).take(len.div_ceil(4)) {
            for (slot, b) in chunk.iter_mut().zip(rng.next_u32().to_le_bytes()) {
                *slot = picks.0[usize::from(b)];
            }
        }
        let pool = pool.get(..len).unwrap_or_default();
        // Most often no character needed was skipped (three times in five for 16 letters and digits): they
        // stand as they are. Characters are ASCII, so only a skip has the high bit set.
        let take = left.min(len);
        let head = pool.get(..take).unwrap_or_default();
        if head.iter().fold(0, |any, &c| any | c) & Picks::SKIP == 0 {
            out.push_str(std::str::from_utf8(head).expect("an ASCII alphabet gives ASCII text"));
            left -= take;
            continue;
        }
        // Every byte is written at the count of characters so far, which only a picked one raises: the
        // first `left` characters stand at the front. The count stays below 32, the pool's most.
        let mut k = 0;
        for &c in pool {
            picked[k & 31] = c;
            k += usize::from(c != Picks::SKIP);
        }
        let k = k.min(left);
        out.push_str(std::str::from_utf8(&picked[..k]).expect("an ASCII alphabet gives ASCII text"));
        left -= k;
    }
}

/// [`random_picked`] into bytes: the same words drawn, the same characters, appended to `out` without the
/// checks a `String` needs (a JSON body is bytes). One pass a pool: a word whose four bytes all pick a
/// character (nearly nine in ten, for letters and digits) stores the four at once; in any other, each byte's
/// character is written at the count of characters so far, which only a picked one raises (the count stays
/// below 32, the pool's most).
pub(super) fn random_picked_bytes(rng: &mut ChaCha8Rng, picks: &Picks, n: usize, out: &mut Vec<u8>) {
    // Room for a whole pool past the last character: each pool is copied whole, in fixed moves instead of a
    // call to `memcpy`, and cut back to the characters it picked.
    out.reserve(n + 32);
    let mut left = n;
    // Four bytes past the pool's 32, for the store of a word's four characters.
    let mut picked = [0u8; 36];
    while left > 0 {
        let len = pool_len(left);
        let mut k = 0;
        for _ in 0..len / 4 {
            let [a, b, c, d] = rng.next_u32().to_le_bytes();
            let four =
                [picks.0[usize::from(a)], picks.0[usize::from(b)], picks.0[usize::from(c)], picks.0[usize::from(d)]];
            // Characters are ASCII: only a skip has its high bit set.
            if u32::from_ne_bytes(four) & 0x8080_8080 == 0 {
                if let Some(slot) = picked.get_mut(k..k + 4) {
                    slot.copy_from_slice(&four);
                }
                k += 4;
            } else {
                for c in four {
                    put(&mut picked, &mut k, c);
                }
            }
        }
        // `fill_bytes` takes a whole word for the last bytes of a pool and drops the rest of it.
        if !len.is_multiple_of(4) {
            for &b in rng.next_u32().to_le_bytes().iter().take(len % 4) {
                put(&mut picked, &mut k, picks.0[usize::from(b)]);
            }
        }
        let k = k.min(left);
        let end = out.len() + k;
        out.extend_from_slice(&picked[..32]);
        out.truncate(end);
        left -= k;
    }
}

/// Writes a byte's character at the count `k` of characters so far, and counts it unless it is a skip.
#[inline(always)]
fn put(picked: &mut [u8; 36], k: &mut usize, c: u8) {
    picked[*k & 31] = c;
    *k += usize::from(c != Picks::SKIP);
}

/// `random_digits(n)` into bytes, as [`random_digits_into`] draws it.
pub(super) fn random_digits_bytes(rng: &mut ChaCha8Rng, n: usize, out: &mut Vec<u8>) {
    random_picked_bytes(rng, &DIGITS, n, out);
}

/// `random_string(n[, alphabet])` into bytes, as [`random_string_into`] draws it.
pub(super) fn random_string_bytes(rng: &mut ChaCha8Rng, n: usize, alphabet: Option<&str>, out: &mut Vec<u8>) {
    match alphabet {
        None => random_picked_bytes(rng, &ALPHANUMERIC_PICKS, n, out),
        Some(_) => {
            let mut text = String::new();
            random_string_into(rng, n, alphabet, &mut text);
            out.extend_from_slice(text.as_bytes());
        }
    }
}

/// Refuses what `random_range(a..b)` would panic on: bounds that are not finite, an empty range, or a range
/// wider than the largest float (`random_float(-1e308, 1e308)`).
fn check_float_range(a: f64, b: f64) -> Result<(), Error> {
    let problem = if !a.is_finite() || !b.is_finite() {
        "the bounds must be finite numbers"
    } else if a >= b {
        "the first bound must be below the second"
    } else if !(b - a).is_finite() {
        "the range is wider than the largest float"
    } else {
        return Ok(());
    };
    Err(invalid(format!("random_float({a}, {b}): {problem}")))
}

/// `timestamp(format)`: now, in UTC, as strftime `format` writes it; a format chrono cannot write is an error.
fn timestamp(format: Option<&str>) -> Result<String, Error> {
    use std::fmt::Write as _;
    let fmt = format.unwrap_or("%Y-%m-%dT%H:%M:%S%.3fZ");
    let items: Vec<_> = chrono::format::StrftimeItems::new(fmt).collect();
    if items.iter().any(|i| matches!(i, chrono::format::Item::Error)) {
        return Err(invalid(format!("timestamp: invalid format {fmt:?}")));
    }
    let mut out = String::new();
    write!(out, "{}", chrono::Utc::now().format_with_items(items.into_iter()))
        .map_err(|_| invalid(format!("timestamp: format {fmt:?} cannot be written")))?;
    Ok(out)
}

pub(super) fn check_len(function: &str, n: usize) -> Result<(), Error> {
    if n > MAX_LEN {
        return Err(invalid(format!("{function}({n}): the length is over the limit of {MAX_LEN}")));
    }
    Ok(())
}

fn invalid(msg: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, msg)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::{any, prop, prop_assert_eq, proptest};
    use rand::{RngCore, SeedableRng};

    use super::*;

    /// Both ways of picking, from generators seeded alike: the text and what is left in the generator. The
    /// table's way into bytes (after a byte already there) is checked against its way into text.
    fn both(seed: u64, alphabet: &[u8], picks: &Picks, n: usize) -> ((String, u64), (String, u64)) {
        let (mut plain, mut table) = (ChaCha8Rng::seed_from_u64(seed), ChaCha8Rng::seed_from_u64(seed));
        let mut bytes_rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut a, mut b, mut c) = (String::new(), String::new(), vec![b'x']);
        random_from(&mut plain, alphabet, n, &mut a);
        random_picked(&mut table, picks, n, &mut b);
        random_picked_bytes(&mut bytes_rng, picks, n, &mut c);
        let table_next = table.next_u64();
        assert_eq!((&c[1..], bytes_rng.next_u64()), (b.as_bytes(), table_next), "bytes and text differ");
        ((a, plain.next_u64()), (b, table_next))
    }

    #[test]
    fn the_tables_of_digits_and_alphanumerics_pick_as_random_from_does() {
        for seed in 0..200 {
            for n in [0, 1, 7, 16, 31, 32, 33, 100] {
                let (plain, table) = both(seed, b"0123456789", &DIGITS, n);
                assert_eq!(plain, table);
                let (plain, table) = both(seed, ALPHANUMERIC.as_bytes(), &ALPHANUMERIC_PICKS, n);
                assert_eq!(plain, table);
            }
        }
    }

    #[test]
    fn only_ascii_alphabets_of_one_to_256_characters_have_a_table() {
        assert!(Picks::new(b"").is_none());
        assert!(Picks::new(&[b'a'; 257]).is_none());
        assert!(Picks::new("é".as_bytes()).is_none());
        assert!(Picks::new(&[b'a'; 256]).is_some());
        assert!(Picks::new(b"\0").is_some());
    }

    proptest! {
        /// Any ASCII alphabet the table takes (NUL included): the same text from the same generator, which
        /// is left in the same state.
        #[test]
        fn the_table_picks_as_random_from_does(
            seed in any::<u64>(),
            alphabet in prop::collection::vec(0u8..128, 1..=256),
            n in 0usize..200,
        ) {
            let picks = Picks::new(&alphabet).expect("an ASCII alphabet of 1 to 256 characters");
            let (plain, table) = both(seed, &alphabet, &picks, n);
            prop_assert_eq!(plain, table);
        }
    }
}
