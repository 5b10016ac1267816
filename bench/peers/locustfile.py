"""The peers workload for Locust (bench.py, PARTS=tools): bench/plans/peers.yaml in Locust's terms.

Each user GETs /items with a random query, then POSTs a form of random fields to /orders; each answer must
be 200 (a failure otherwise); every request is a row of RESULTS (CSV: time, name, ms, status, error), as
planrun writes a JTL row. THINK (seconds, default 0) is a pause after each request.

    RESULTS=r.csv locust -f bench/peers/locustfile.py --headless -u 200 -r 200 -t 10s -H http://127.0.0.1:8080 --csv stats
"""
import os
import random
import string
import time

from locust import FastHttpUser, events, task

THINK = float(os.environ.get("THINK", "0"))
LETTERS = string.ascii_letters + string.digits
_results = open(os.environ.get("RESULTS", os.devnull), "w", buffering=1 << 16)


@events.request.add_listener
def _row(request_type, name, response_time, response_length, response, exception, **_):
    status = response.status_code if response is not None else 0
    _results.write(f"{int(time.time() * 1000)},{name},{response_time:.0f},{status},{'' if exception is None else repr(str(exception))}\n")


@events.quitting.add_listener
def _close(**_):
    _results.flush()


def rand_string(n):
    return "".join(random.choices(LETTERS, k=n))


class Customer(FastHttpUser):
    users = 0

    def on_start(self):
        Customer.users += 1
        self.vu = Customer.users

    def wait_time(self):
        return 0

    def pause(self):
        if THINK:
            time.sleep(THINK)  # gevent patches time.sleep: it yields to the other users

    def check(self, response):
        if response.status_code != 200:
            response.failure(f"status {response.status_code}, expected 200")

    @task
    def get_then_post(self):
        with self.client.get("/items", params={"q": rand_string(16), "n": random.randint(1, 1000000)},
                             name="get", catch_response=True) as r:
            self.check(r)
        self.pause()
        with self.client.post("/orders", data={"name": rand_string(12), "qty": random.randint(1, 100),
                                               "user": self.vu},
                              name="post", catch_response=True) as r:
            self.check(r)
        self.pause()
