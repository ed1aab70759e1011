"""Self-play spread over Ray workers: each worker (a Ray actor, one CPU) holds its own Game and
plays batches of whole games in Rust; the driver hands out batches and adds up the results.

    python examples/ray_selfplay.py --workers 2 --games 2000           # a laptop: ray.init()
    python examples/ray_selfplay.py --address auto --workers 64 ...    # a running cluster

The same script runs on a laptop and on a cluster: only ``--address`` changes. A Game pickles as
its ruleset's and content's texts, so the workers need no copy of the project's files; a State
pickles through its save, so a position can be sent to a worker to be played out from there.
"""

from __future__ import annotations

import argparse
import time

import ray

import rulecraft


@ray.remote(num_cpus=1)
class SelfPlayWorker:
    """Holds one Game (loaded once on the worker) and plays batches of games."""

    def __init__(self, game: rulecraft.Game):
        self.game = game

    def play(self, games: int, seed: int) -> dict:
        """`games` random games from `seed`, played in Rust: the wins and the time taken."""
        cpu = time.process_time()
        r = rulecraft.play_random(games, seed=seed, game=self.game)
        cpu = time.process_time() - cpu
        wins = [int((r["winners"] == p).sum()) for p in range(len(self.game.players))]
        return {
            "games": games,
            "wins": wins,
            "draws": int((r["winners"] < 0).sum()),
            "decisions": int(r["decisions"].sum()),
            "seconds": r["elapsed"],
            "cpu_seconds": cpu,
        }

    def play_out(self, state: rulecraft.State, seed: int) -> list:
        """Plays a position sent by the driver to its end with random agents: the returns."""
        agent = rulecraft.RandomAgent(seed)
        while not state.is_terminal():
            state.apply(agent.choose(state))
        return state.returns()


def self_play(workers: int, games: int, batch: int, seed: int = 0) -> dict:
    """Plays `games` games in batches of `batch` over `workers` workers (Ray must be started).
    Returns the totals, games per second in all and per worker."""
    game = rulecraft.classic()
    pool = [SelfPlayWorker.remote(game) for _ in range(workers)]
    # Each worker loads its game before the clock starts.
    ray.get([w.play.remote(1, seed) for w in pool])
    batches = [(min(batch, games - i), seed + 1 + i // batch) for i in range(0, games, batch)]
    start = time.perf_counter()
    pending = {}
    queue = list(batches)
    for w in pool:
        if queue:
            n, s = queue.pop(0)
            pending[w.play.remote(n, s)] = w
    results, per_worker = [], {id(w): 0 for w in pool}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        w = pending.pop(done[0])
        r = ray.get(done[0])
        results.append(r)
        per_worker[id(w)] += r["games"]
        if queue:
            n, s = queue.pop(0)
            pending[w.play.remote(n, s)] = w
    wall = time.perf_counter() - start
    total = sum(r["games"] for r in results)
    return {
        "workers": workers,
        "games": total,
        "wins": [sum(r["wins"][p] for r in results) for p in range(len(game.players))],
        "draws": sum(r["draws"] for r in results),
        "decisions": sum(r["decisions"] for r in results),
        "seconds": wall,
        "games_per_second": total / wall,
        "games_per_cpu_second": total / max(sum(r["cpu_seconds"] for r in results), 1e-9),
        "per_worker": [per_worker[id(w)] / wall for w in pool],
    }


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--address", default=None,
                    help="a Ray cluster's address (`auto` for the one this machine belongs to); "
                         "none: a local Ray with --workers CPUs")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    if not ray.is_initialized():
        if a.address:
            ray.init(address=a.address)
        else:
            ray.init(num_cpus=a.workers, include_dashboard=False)
    r = self_play(a.workers, a.games, a.batch, a.seed)
    print(f"games: {r['games']}  wins: {r['wins']}  draws: {r['draws']}")
    for i, g in enumerate(r["per_worker"]):
        print(f"worker {i}: {g:.0f} games per second")
    print(f"total: {r['games_per_second']:.0f} games per second "
          f"({r['workers']} workers, {r['seconds']:.2f} s)")
    # A position sent to a worker (pickled through its save) and played out there.
    state = rulecraft.classic().new_game(a.seed)
    worker = SelfPlayWorker.remote(rulecraft.classic())
    print(f"a position played out on a worker: returns {ray.get(worker.play_out.remote(state, 1))}")
    return r


if __name__ == "__main__":
    main()
