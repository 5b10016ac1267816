// The peers workload for k6 (bench.py, PARTS=tools): bench/plans/peers.yaml in k6's terms. Each iteration
// GETs /items with a random query, then POSTs a form of random fields to /orders; `check` asserts each
// status; `--out csv=FILE` writes every request's metrics, as planrun writes a JTL row. BASE is the target,
// THINK (seconds, default 0) a pause after each request, SUMMARY where handleSummary writes its JSON.
//
//   k6 run --vus 200 --duration 10s --out csv=r.csv -e BASE=http://127.0.0.1:8080 -e SUMMARY=s.json bench/peers/k6.js
import http from "k6/http";
import { check, sleep } from "k6";

const BASE = __ENV.BASE || "http://127.0.0.1:8080";
const THINK = Number(__ENV.THINK || 0);
const LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

function randString(n) {
  let s = "";
  for (let i = 0; i < n; i++) s += LETTERS[Math.floor(Math.random() * LETTERS.length)];
  return s;
}

function randInt(low, high) {
  return low + Math.floor(Math.random() * (high - low + 1));
}

export default function () {
  const get = http.get(`${BASE}/items?q=${randString(16)}&n=${randInt(1, 1000000)}`, { tags: { name: "get" } });
  check(get, { "status 200": (r) => r.status === 200 });
  if (THINK) sleep(THINK);
  // An object body is sent as application/x-www-form-urlencoded.
  const post = http.post(`${BASE}/orders`, { name: randString(12), qty: String(randInt(1, 100)), user: String(__VU) },
    { tags: { name: "post" } });
  check(post, { "status 200": (r) => r.status === 200 });
  if (THINK) sleep(THINK);
}

export function handleSummary(data) {
  return __ENV.SUMMARY ? { [__ENV.SUMMARY]: JSON.stringify(data) } : {};
}
