//! Secret values at load time: too short to be masked is a plan error, and plan errors never show one.

use std::collections::HashSet;
use std::sync::Arc;

use super::decode::Ctx;
use super::model::ThreadGroup;
use crate::diag::{Diagnostic, Diagnostics};
use crate::mask::{Masks, MIN_SECRET_LEN};
use crate::source::Span;
use crate::template::{Scope, Shared, Templates, Tpl};

const HINT: &str = "a shorter secret cannot be masked without hiding unrelated text (every `1` of an address, \
                    say): use a longer value, or drop `secret: true`";

/// `1 character`, `3 characters`.
fn characters(value: &str) -> String {
    match value.chars().count() {
        1 => "1 character".into(),
        n => format!("{n} characters"),
    }
}

/// True for a value too short to be a secret (an empty one masks nothing and is allowed).
fn too_short(value: &str) -> bool {
    (1..MIN_SECRET_LEN).contains(&value.chars().count())
}

/// Refuses a secret property shorter than [`MIN_SECRET_LEN`] characters; `how` it got its value ("is",
/// "set with -D to a value").
pub(super) fn check_property(cx: &mut Ctx, span: Span, name: &str, value: &str, how: &str) {
    if too_short(value) {
        let long = characters(value);
        let message = format!("secret property `{name}` {how} {long} long; a secret has at least {MIN_SECRET_LEN}");
        cx.error(Diagnostic::new(span, message).hint(HINT));
    }
}

/// Refuses a secret variable that renders shorter than [`MIN_SECRET_LEN`] characters for the first virtual
/// user of a group, the value `dry-run` shows. Rendered in an environment of its own, so that the run's
/// counters do not move.
pub(super) fn check_variables(
    cx: &mut Ctx,
    variables: &[(Arc<str>, Tpl)],
    secret: &[(Arc<str>, Span)],
    shared: &Arc<Shared>,
    seed: u64,
    groups: &[ThreadGroup],
) {
    if secret.is_empty() {
        return;
    }
    let mut scratch = Templates::new();
    let compiled: Vec<(&Arc<str>, Option<Tpl>)> =
        variables.iter().map(|(name, tpl)| (name, scratch.add(tpl.source()).ok().map(|(t, _)| t))).collect();
    let mut refused = HashSet::new();
    for (i, group) in groups.iter().enumerate() {
        let scope = Scope::for_vu(shared.clone(), seed, i as u32 + 1, group.name.clone(), 1);
        for (name, tpl) in &compiled {
            if let Some(Ok(v)) = tpl.as_ref().map(|t| scratch.render(t, &scope)) {
                scope.set_var((*name).clone(), v.into());
            }
        }
        for (name, span) in secret {
            let Some(value) = scope.var(name).map(|v| v.to_string()) else { continue };
            if too_short(&value) && refused.insert(name.clone()) {
                let message = format!(
                    "secret variable `{name}` is {} long for the first user of group `{}`; a secret has at least \
                     {MIN_SECRET_LEN}",
                    characters(&value),
                    group.name
                );
                cx.error(Diagnostic::new(*span, message).hint(HINT));
            }
        }
    }
}

/// Masks the secret properties in every message, expectation and hint of `diags`.
pub(super) fn mask(mut diags: Diagnostics, secrets: &[String]) -> Diagnostics {
    let masks = Masks::new(secrets.iter().map(String::as_str).filter(|s| !too_short(s)));
    if masks.is_empty() {
        return diags;
    }
    for d in &mut diags.items {
        masks.mask_in_place(&mut d.message);
        for text in [&mut d.expected, &mut d.hint].into_iter().flatten() {
            masks.mask_in_place(text);
        }
    }
    diags
}
