//! A body's first bytes, as the outputs show it: secrets masked, and never a part of one at the cut.

use super::Masks;

/// The first `limit` bytes of a body of `size` bytes of which `kept` were kept, secrets masked, and how
/// many bytes of the body (as received) they leave out. A secret that crosses the cut is masked whole: the
/// text is masked before it is cut, and when the text masked was itself cut, the cut moves back by what
/// masking took out, so that no byte beyond the masked text is shown (see [`Masks::reach`]).
pub(crate) fn masked_prefix(kept: &[u8], size: u64, limit: usize, masks: &Masks) -> (Vec<u8>, u64) {
    let window = &kept[..kept.len().min(limit + masks.reach())];
    let masked = masks.mask_bytes(window);
    let shrunk = window.len().saturating_sub(masked.len());
    let whole = window.len() as u64 >= size;
    // When the whole body was masked any cut is safe.
    let cut = if whole { limit } else { limit.saturating_sub(shrunk) }.min(masked.len());
    let left_out = if whole && cut == masked.len() { 0 } else { size.saturating_sub((cut + shrunk) as u64) };
    (masked[..cut].to_vec(), left_out)
}

#[cfg(test)]
mod tests {
    use super::masked_prefix;
    use crate::mask::Masks;

    #[test]
    fn a_secret_across_the_cut_is_never_shown_in_part() {
        let secret = "Sup3rS3cretValue";
        let masks = Masks::new([secret]);
        for at in 0..40 {
            let mut body = "x".repeat(2000 + at).into_bytes();
            body.extend_from_slice(secret.as_bytes());
            body.extend_from_slice(&[b'y'; 100]);
            let (shown, more) = masked_prefix(&body, body.len() as u64, 2030, &masks);
            let text = String::from_utf8(shown).unwrap();
            assert!(text.len() <= 2030, "{}", text.len());
            for piece in (4..=secret.len()).map(|n| &secret[..n]) {
                assert!(!text.contains(piece), "a piece of the secret ({piece}) shows at {at}");
            }
            assert!(more > 0 && more <= body.len() as u64);
            // Kept only in part (the client cut the body): the same holds.
            let kept = &body[..2030 + masks.reach()];
            let (shown, _) = masked_prefix(kept, body.len() as u64, 2030, &masks);
            assert!(!String::from_utf8(shown).unwrap().contains(&secret[..4]), "at {at}");
        }
    }

    #[test]
    fn a_short_body_is_shown_whole_and_nothing_is_left_out() {
        let masks = Masks::new(["Sup3rS3cretValue"]);
        let body = b"token=Sup3rS3cretValue; end";
        assert_eq!(masked_prefix(body, body.len() as u64, 2048, &masks), (b"token=***; end".to_vec(), 0));
        let (shown, more) = masked_prefix(&[b'a'; 5000], 5000, 2048, &Masks::default());
        assert_eq!((shown.len(), more), (2048, 2952));
    }
}
