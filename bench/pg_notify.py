"""What a NOTIFY per write costs PostgreSQL's commits (service/watch.py: writes NOTIFY only
while some process has waiters).

    QAHWA_TEST_PG_URL=postgresql+psycopg://… python -m bench.pg_notify

``WRITERS`` connections each commit one-row updates as fast as they can for ``SECONDS``,
with one process LISTENing as a host does: without NOTIFY, then with the update returning
``pg_notify`` (as the service's writes did for every event), in turns, ``ROUNDS`` times.
A NOTIFYing commit takes a database-wide lock held until after its commit record is flushed
(PostgreSQL queues notifications in commit order), so NOTIFYing writers commit one at a
time whichever host they are on. Prints commits/s of each and their ratio; nothing passes or
fails.
"""

from __future__ import annotations

import os
import threading
import time

from bench.pg import conninfo, loadavg, pg_url

WRITERS = int(os.environ.get("BENCH_WRITERS", "8"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "3"))
ROUNDS = 3
TABLE = "bench_pg_notify"
CHANNEL = "bench_pg_notify"


def commits_per_second(info: str, notify: bool) -> float:
    import psycopg

    done = [0]
    guard = threading.Lock()
    stop = time.monotonic() + SECONDS
    update = f"UPDATE {TABLE} SET v = v + 1 WHERE id = %s"
    if notify:
        update += f" RETURNING pg_notify('{CHANNEL}', 'x')"

    def writer(i: int) -> None:
        n = 0
        with psycopg.connect(info) as conn:
            while time.monotonic() < stop:
                cur = conn.execute(update, (i,))
                if notify:
                    cur.fetchall()  # the update's pg_notify result, as the service reads it
                conn.commit()
                n += 1
        with guard:
            done[0] += n

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return done[0] / SECONDS


def run() -> None:
    url = pg_url("pg_notify")
    if url is None:
        return
    import psycopg

    info = conninfo(url)
    with psycopg.connect(info, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
        conn.execute(f"CREATE TABLE {TABLE} (id int PRIMARY KEY, v int NOT NULL)")
        conn.execute(f"INSERT INTO {TABLE} SELECT g, 0 FROM generate_series(0, {WRITERS - 1}) g")
    listener = psycopg.connect(info, autocommit=True)
    listener.execute(f"LISTEN {CHANNEL}")
    stop = threading.Event()

    def drain() -> None:
        while not stop.is_set():
            for _ in listener.notifies(timeout=0.2):
                pass

    th = threading.Thread(target=drain, daemon=True)
    th.start()
    rates: dict[bool, list[float]] = {False: [], True: []}
    try:
        for _ in range(ROUNDS):
            for notify in (False, True):
                rates[notify].append(commits_per_second(info, notify))
    finally:
        stop.set()
        th.join(timeout=5)
        listener.close()
        with psycopg.connect(info, autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
    load = loadavg()
    plain, notified = (sum(rates[k]) / ROUNDS for k in (False, True))
    print(f"{WRITERS} writers, one-row updates, {SECONDS:g} s × {ROUNDS} in turns (load {load})")
    print(f"  without NOTIFY: {plain:8.0f} commits/s  {[round(x) for x in rates[False]]}")
    print(f"  with NOTIFY:    {notified:8.0f} commits/s  {[round(x) for x in rates[True]]}")
    print(f"  without / with: {plain / notified:.2f}×")


if __name__ == "__main__":
    run()
