//! What a JSON body costs: the request of `bench/plans/json-body.yaml` (a 10 KB order of 72 items, 434
//! templated values) rendered by planrun, against its floor: the same body built directly with serde_json
//! and the same random generator (ChaCha8, seeded as a virtual user's), with no plan and no templates. Both
//! make the same bytes, which the bench checks before it times anything.
//!
//!   cargo bench --bench json_body                    # both, alternated rounds: time per body and the ratio
//!   cargo bench --bench json_body -- planrun 2000    # only planrun's, 2,000 bodies (for callgrind)
//!   cargo bench --bench json_body -- floor 2000      # only the floor's
//!
//! Under callgrind (instructions repeat on a busy machine; subtract a run of 0 bodies for the set-up):
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/deps/json_body-HASH planrun 2000

use std::path::Path;
use std::time::Instant;

use planrun::compile::{compile, Graph, RequestNode};
use planrun::plan::model::Step;
use planrun::plan::{PlanFile, PlanOptions};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

const ALPHANUMERIC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// `n` characters of `alphabet` (at most 256) from random bytes, each byte `b` giving `alphabet[b * len >> 8]`
/// unless it falls in the few that would make some characters likelier (Lemire's method on bytes).
fn random_string(rng: &mut ChaCha8Rng, n: usize, alphabet: &[u8]) -> String {
    let len = alphabet.len() as u16;
    let skip_below = 256 % len;
    let mut out = String::with_capacity(n);
    let mut pool = [0u8; 32];
    while out.len() < n {
        let left = n - out.len();
        let pool = &mut pool[..(left + left / 8 + 1).min(32)];
        rng.fill_bytes(pool);
        for &b in pool.iter() {
            let m = u16::from(b) * len;
            if m & 0xff >= skip_below && out.len() < n {
                out.push(char::from(alphabet[usize::from(m >> 8)]));
            }
        }
    }
    out
}

/// The floor: the plan's body for user `vu` of group 1 at `iteration`, built with serde_json directly.
fn floor_body(rng: &mut ChaCha8Rng, vu: u32, iteration: u64) -> Vec<u8> {
    let customer = random_string(rng, 16, ALPHANUMERIC);
    let items: Vec<Value> = (0..72)
        .map(|_| {
            let id = rng.random_range(1..=999_999i64);
            let sku = random_string(rng, 12, ALPHANUMERIC);
            let name = random_string(rng, 24, ALPHANUMERIC);
            let qty = rng.random_range(1..=9i64);
            let price = rng.random_range(100..=99_999i64);
            let note = random_string(rng, 40, ALPHANUMERIC);
            json!({ "id": id, "sku": sku, "name": name, "qty": qty, "price": price, "note": note })
        })
        .collect();
    serde_json::to_vec(&json!({ "order": format!("{vu}-{iteration}"), "customer": customer, "items": items }))
        .expect("a JSON value serializes")
}

/// A virtual user's generator, as planrun derives it from the seed, the group and the user.
fn user_rng(seed: u64, group_no: u32, vu: u32) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream((u64::from(group_no) << 32) | u64::from(vu));
    rng
}

fn load() -> Graph {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/plans/json-body.yaml");
    let plan = PlanFile::read(&path).and_then(|f| f.validate(&PlanOptions::default())).expect("the bench plan loads");
    compile(plan)
}

fn request_node(graph: &Graph) -> &RequestNode {
    match graph.groups[0].steps.first() {
        Some(Step::Request(node)) => node.as_ref(),
        _ => panic!("the bench plan starts with its request"),
    }
}

/// Time per body of `bodies` bodies, in ns.
fn time(bodies: u64, mut one: impl FnMut(u64) -> usize) -> f64 {
    let start = Instant::now();
    let mut bytes = 0;
    for i in 1..=bodies {
        bytes += one(i);
    }
    std::hint::black_box(bytes);
    start.elapsed().as_nanos() as f64 / bodies as f64
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let only = args.iter().find(|a| *a == "planrun" || *a == "floor").cloned();
    let bodies: u64 = args.iter().find_map(|a| a.parse().ok()).unwrap_or(2_000);

    let graph = load();
    let node = request_node(&graph);
    let seed = graph.seed;
    let scope = planrun::run::user_scope(&graph, 0, 1);
    let mut planrun_one = |i: u64| {
        scope.set_iteration(i);
        let request = planrun::run::wire::render(&graph, node, &scope, |_| None).expect("the request renders");
        request.body.len()
    };
    let mut rng = user_rng(seed, 1, 1);
    let mut floor_one = |i: u64| floor_body(&mut rng, 1, i).len();

    match only.as_deref() {
        Some("planrun") => {
            let ns = time(bodies, &mut planrun_one);
            println!("planrun: {bodies} bodies, {ns:.0} ns a body");
            return;
        }
        Some(_) => {
            let ns = time(bodies, &mut floor_one);
            println!("floor: {bodies} bodies, {ns:.0} ns a body");
            return;
        }
        None => {}
    }

    // The same bytes first: planrun's first bodies are the floor's.
    let check_scope = planrun::run::user_scope(&graph, 0, 1);
    let mut check_rng = user_rng(seed, 1, 1);
    for i in 1..=3 {
        check_scope.set_iteration(i);
        let request = planrun::run::wire::render(&graph, node, &check_scope, |_| None).expect("the request renders");
        assert_eq!(
            String::from_utf8_lossy(&request.body),
            String::from_utf8_lossy(&floor_body(&mut check_rng, 1, i)),
            "planrun and the floor make the same body"
        );
    }

    let rounds = 9;
    let mut ratios = Vec::new();
    let (mut p, mut f) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let (a, b) = if round % 2 == 0 {
            let a = time(bodies, &mut planrun_one);
            (a, time(bodies, &mut floor_one))
        } else {
            let b = time(bodies, &mut floor_one);
            (time(bodies, &mut planrun_one), b)
        };
        p.push(a);
        f.push(b);
        ratios.push(a / b);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let spread = |v: &[f64]| format!("{:.2} to {:.2}", v[0], v[v.len() - 1]);
    let (pm, fm, rm) = (median(&mut p), median(&mut f), median(&mut ratios));
    println!("{rounds} rounds of {bodies} bodies, alternated; medians:");
    println!("  planrun (the whole request rendered)  {pm:>8.0} ns a body");
    println!("  floor (serde_json, same generator)    {fm:>8.0} ns a body");
    println!("  planrun / floor                       {rm:>8.2} (rounds {})", spread(&ratios));
}
