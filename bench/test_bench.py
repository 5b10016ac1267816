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


if __name__ == "__main__":
    unittest.main()
