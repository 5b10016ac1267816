#!/usr/bin/env python3
"""Checks of bench/bench.py's arithmetic and parsing, without load: `python3 bench/test_bench.py`."""
import os
import tempfile
import unittest

import bench


class Orders(unittest.TestCase):
    def test_each_tool_takes_each_place_and_follows_each_other_equally_often(self):
        for k in range(1, 7):
            rows = bench.balanced_orders(k)
            self.assertEqual(len(rows), k if k % 2 == 0 else 2 * k)
            for place in range(k):
                counts = [sum(1 for row in rows if row[place] == tool) for tool in range(k)]
                self.assertEqual(len(set(counts)), 1, (k, place, counts))
            follows = {}
            for row in rows:
                for a, b in zip(row, row[1:]):
                    follows[(a, b)] = follows.get((a, b), 0) + 1
            if k > 1:
                self.assertEqual(len(follows), k * (k - 1))
                self.assertEqual(len(set(follows.values())), 1, (k, follows))

    def test_rounds_go_through_the_orders(self):
        tools = ["wrk", "new", "base"]
        seen = {tuple(bench.order(tools, r)) for r in range(1, 7)}
        self.assertEqual(len(seen), 6)
        self.assertEqual(bench.order(tools, 1), bench.order(tools, 7))


class Figures(unittest.TestCase):
    def test_median_and_ratio(self):
        self.assertEqual(bench.median([3, 1, 2]), 2)
        self.assertEqual(bench.median([4, 1, 2, 3]), 2.5)
        self.assertIsNone(bench.median([None]))
        self.assertIsNone(bench.ratio(1, 0))
        self.assertEqual(bench.fmt(None), "-")

    def test_round_ratio_is_the_median_of_the_rounds_ratios(self):
        b = bench.Bench.__new__(bench.Bench)
        b.runs = [
            {"part": "tput", "tool": "wrk", "round": 1, "cpu10k": 1.0},
            {"part": "tput", "tool": "planrun", "round": 1, "cpu10k": 0.9},
            {"part": "tput", "tool": "wrk", "round": 2, "cpu10k": 2.0},
            {"part": "tput", "tool": "planrun", "round": 2, "cpu10k": 2.2},
            {"part": "tput", "tool": "wrk", "round": 3, "cpu10k": 1.0},
            {"part": "tput", "tool": "planrun", "round": 3, "cpu10k": 0.95},
            {"part": "tput", "tool": "planrun", "round": 4, "failed": True},
        ]
        self.assertAlmostEqual(b.round_ratio("tput", "planrun", "wrk", "cpu10k"), 0.95)
        self.assertAlmostEqual(b.get("tput", "planrun", "cpu10k"), 0.95)
        self.assertEqual(b.failed("tput", "planrun"), 1)
        self.assertEqual(b.ratio_cell("tput", "planrun", "wrk", "rps"), "-")
        self.assertEqual(b.ratio_cell("tput", "planrun", "wrk", "cpu10k"), "0.95 (0.90 to 1.10)")


class Parsing(unittest.TestCase):
    def test_summary_total_line(self):
        text = (
            "Label    Samples  Mean  Min  Max  StdDev   p50   p90   p95   p99  Error %  Throughput  Recv KB/s  Sent KB/s\n"
            "----------------------------------------------------------------------------------------------------\n"
            "get        1000  0.40  0.1  3.0    0.20  0.35  0.60  0.70  1.20    0.50%      2000.0      10.00      20.00\n"
            "TOTAL      1000  0.40  0.1  3.0    0.20  0.35  0.60  0.70  1.20    0.50%      2000.0      10.00      20.00\n")
        self.assertEqual(bench.summary(text), {"reqs": 1000, "p50": 0.35, "p99": 1.2, "errs": 5})
        self.assertEqual(bench.summary("nothing"), {})

    def test_jtl_figures(self):
        header = ("timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,"
                  "failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n")
        rows = ['1000,1,get,200,OK,users 1-1,text,true,,2,10,2,2,"http://x/?a,b",1,0,0\n',
                "1001,1,get,200,OK,users 1-2,text,true,,2,10,2,2,http://x/,1,0,0\n",
                "1005,1,get,Non HTTP response code: ReadTimeout,x,users 1-2,text,false,t,0,10,2,3,http://x/,0,0,0\n"]
        with tempfile.NamedTemporaryFile("w", suffix=".jtl", delete=False) as f:
            f.write(header + "".join(rows))
        try:
            figures = bench.jtl_figures(f.name)
            self.assertEqual(figures["rows"], 3)
            self.assertEqual(figures["active"], 3)
            self.assertEqual(figures["served"], 2)
            self.assertEqual(figures["failures"], {"Non HTTP response code: ReadTimeout": 1})
            self.assertEqual(bench.jtl_column(f.name, "timeStamp", int), [1000, 1001, 1005])
        finally:
            os.unlink(f.name)


class PeerTools(unittest.TestCase):
    def file(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write(text)
        self.addCleanup(os.unlink, f.name)
        return f.name

    def test_drill_stats_reads_the_global_lines_not_each_step_s(self):
        text = ("get                       Total requests            4000\n"
                "get                       Failed requests           3\n"
                "Time taken for tests      2.1 seconds\n"
                "\x1b[33mTotal requests\x1b[0m            \x1b[35m8000\x1b[0m\n"
                "Successful requests       7996\n"
                "Failed requests           4\n")
        self.assertEqual(bench.drill_stats(text), {"reqs": 8000, "errs": 4})
        self.assertEqual(bench.drill_stats("thread 'main' panicked"), {})

    def test_locust_rows_count_each_request_and_each_failure(self):
        rows = ("1796298678934,get,16,200,\n"
                "1796298678935,post,18,503,'status 503, expected 200'\n"
                "1796298678936,get,0,0,'ConnectionRefusedError(111)'\n"
                "1796298678937,post,3,200,\n")
        self.assertEqual(bench.locust_rows(self.file(rows)), {"reqs": 4, "errs": 2})
        self.assertEqual(bench.locust_rows("/nonexistent/locust.csv"), {})

    def test_k6_summary(self):
        text = '{"metrics": {"http_reqs": {"values": {"count": 1550, "rate": 475.9}}, ' \
               '"checks": {"values": {"rate": 0.99, "passes": 1548, "fails": 2}}}}'
        self.assertEqual(bench.k6_summary(text), {"reqs": 1550, "errs": 2})
        self.assertEqual(bench.k6_summary("{}"), {})
        self.assertEqual(bench.k6_summary("not json"), {})

    def test_artillery_report_counts_what_was_not_a_200(self):
        text = '{"aggregate": {"counters": {"http.requests": 1000, "http.codes.200": 990, "http.codes.503": 4, ' \
               '"errors.ETIMEDOUT": 6, "vusers.failed": 10}}}'
        self.assertEqual(bench.artillery_report(text), {"reqs": 1000, "errs": 10})
        self.assertEqual(bench.artillery_report('{"aggregate": {}}'), {})

    def test_access_figures_count_methods_statuses_and_rates(self):
        lines = [f"{1000 + i * 0.01:.3f} {'GET' if i % 2 else 'POST'} {200 if i else 502}" for i in range(1001)]
        figures = bench.access_figures("\n".join(lines) + "\nbroken line\n")
        self.assertEqual(figures["served"], 1001)
        self.assertEqual((figures["served_get"], figures["served_post"], figures["served_bad"]), (500, 501, 1))
        self.assertAlmostEqual(figures["served_s"], 10.0, places=6)
        self.assertAlmostEqual(figures["server_rps"], 100.1, places=6)
        # The window where every user is active: 2 s after the first request to 1 s before the last.
        self.assertAlmostEqual(bench.access_figures("\n".join(lines), 2)["steady_rps"], 100.0, places=6)
        self.assertAlmostEqual(bench.access_figures("\n".join(lines), 2, 6)["steady_rps"], 100.0, places=6)
        self.assertEqual(bench.access_figures(""), {"served": 0, "served_get": 0, "served_post": 0, "served_bad": 0})

    def test_connected_is_an_established_connection_to_the_port_not_its_listener(self):
        head = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        listen = "   0: 0100007F:46A6 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1\n"
        other = "   1: 0100007F:46A7 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 2\n"
        client = "   2: 0100007F:C351 0100007F:46A6 01 00000000:00000000 00:00000000 00000000     0        0 3\n"
        served = "   3: 0100007F:46A6 0100007F:C351 01 00000000:00000000 00:00000000 00000000     0        0 4\n"
        self.assertFalse(bench.connected("18086", self.file(head + listen + other + client)))
        self.assertTrue(bench.connected("18086", self.file(head + listen + served)))
        self.assertFalse(bench.connected("18086", "/nonexistent/tcp"))

    def test_tree_cpu_of_this_process(self):
        start = bench.tree_cpu(os.getpid())
        deadline = os.times().user + 0.05
        while os.times().user < deadline:
            pass
        self.assertGreater(bench.tree_cpu(os.getpid()), start)
        self.assertEqual(bench.tree_cpu(2 ** 22 + 1), 0)

    def test_count_cell_names_a_tool_that_did_less_than_it_says(self):
        b = bench.Bench.__new__(bench.Bench)
        b.runs = [
            {"part": "tools", "tool": "k6", "round": 1, "tool_reqs": 1000, "served": 1000},
            {"part": "tools", "tool": "k6", "round": 2, "tool_reqs": 990, "served": 1000},
            {"part": "tools", "tool": "x", "round": 1, "tool_reqs": 5000, "served": 1000},
        ]
        self.assertEqual(bench.count_cell(b, "tools", "k6", 200), "0.995 (gap +10)")
        self.assertEqual(bench.count_cell(b, "tools", "x", 200), "5.000 (gap -4000) MISMATCH")
        self.assertEqual(bench.count_cell(b, "tools", "none", 200), "-")


if __name__ == "__main__":
    unittest.main()
