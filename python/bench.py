"""Measures the Python package (not a test: run it by hand on a quiet machine).

    python bench.py [--steps 200000] [--games 1000] [--ray-games 2000] [--rulecraft PATH]

1. Environment steps a second through the PettingZoo AEC API (``agent_iter``, ``last``,
   ``step``) with a random policy, on one core; also through ``State`` alone.
2. Whole games a second through ``play_random`` (one thread) against ``rulecraft play --games N``
   (the Rust command, built with ``cargo build --release``), the same games.
3. Ray: games a second on two local workers against one.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import time

import numpy as np

import rulecraft
from rulecraft.env import env as make_env


def pettingzoo_steps(steps: int, policy: str) -> float:
    """Steps a second of the AEC loop with a random legal action (``policy``: ``choice``, a
    Python pick among the mask's legal indexes; ``sample``, ``action_space.sample(mask)``)."""
    e = make_env()
    rng = random.Random(0)
    e.reset(seed=0)
    done, game = 0, 0
    start, cpu = time.perf_counter(), time.process_time()
    while done < steps:
        for agent in e.agent_iter():
            obs, reward, term, trunc, info = e.last()
            if term or trunc:
                action = None
            elif policy == "sample":
                action = e.action_space(agent).sample(obs["action_mask"])
            else:
                action = rng.randrange(np.count_nonzero(obs["action_mask"]))
            e.step(action)
            done += 1
        game += 1
        e.reset(seed=game)
    return done / (time.perf_counter() - start), done / (time.process_time() - cpu)


def state_steps(steps: int) -> float:
    """Steps a second through ``State`` alone: observe the player to act, pick, apply."""
    g = rulecraft.classic()
    rng = random.Random(0)
    done, game = 0, 0
    start, cpu = time.perf_counter(), time.process_time()
    while done < steps:
        s = g.new_game(game)
        p = s.current_player
        while p is not None and p >= 0:
            obs, mask = s.observe(p)
            p = s.step(rng.randrange(s.num_options()))
            done += 1
        game += 1
    return done / (time.perf_counter() - start), done / (time.process_time() - cpu)


def rust_rate(binary: str, games: int):
    """`rulecraft play --games N`: its own games per second, and games per CPU second of the
    whole command (loading included)."""
    if not os.path.exists(binary):
        return None
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    before = os.times()
    out = subprocess.run([binary, "play", "--games", str(games)], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    m = re.search(r"games per second: (\d+)", out)
    return (float(m.group(1)) if m else None), games / cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200_000)
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--ray-games", type=int, default=2000)
    ap.add_argument("--rulecraft", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "target", "release", "rulecraft"))
    ap.add_argument("--skip-ray", action="store_true")
    a = ap.parse_args()

    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, cpus {os.cpu_count()}, "
          f"load {os.getloadavg()[0]:.2f}")
    # Each rate by the wall clock and by the process's CPU time (the second is what one core
    # gives when other processes share the machine).
    for policy in ("choice", "sample"):
        wall, cpu = pettingzoo_steps(a.steps, policy)
        print(f"pettingzoo AEC, random policy ({policy}): {wall:,.0f} steps/s, "
              f"{cpu:,.0f} per CPU second")
    wall, cpu = state_steps(a.steps)
    print(f"State.observe + State.step: {wall:,.0f} steps/s, {cpu:,.0f} per CPU second")

    rulecraft.play_random(20)  # warm up: the game loaded
    c = time.process_time()
    py = rulecraft.play_random(a.games, seed=0)
    py_cpu = a.games / (time.process_time() - c)
    rust = rust_rate(a.rulecraft, a.games)
    line = (f"play_random, 1 thread: {py['games_per_second']:.0f} games/s, "
            f"{py_cpu:.0f} per CPU second")
    if rust:
        line += (f"; rulecraft play: {rust[0]:.0f} games/s, {rust[1]:.0f} per CPU second; "
                 f"ratio {py['games_per_second'] / rust[0]:.2f} (wall), "
                 f"{py_cpu / rust[1]:.2f} (CPU)")
    print(line)
    two = rulecraft.play_random(a.games, seed=0, threads=2)
    print(f"play_random, 2 threads: {two['games_per_second']:.0f} games/s")

    if not a.skip_ray:
        import ray

        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples"))
        from ray_selfplay import self_play

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        one = self_play(1, a.ray_games, 100)
        both = self_play(2, a.ray_games, 100)
        print(f"ray, 1 worker: {one['games_per_second']:.0f} games/s; 2 workers: "
              f"{both['games_per_second']:.0f} games/s; speed-up "
              f"{both['games_per_second'] / one['games_per_second']:.2f} (wall); per worker "
              f"{one['games_per_cpu_second']:.0f} and {both['games_per_cpu_second']:.0f} games "
              f"per CPU second")
        ray.shutdown()


if __name__ == "__main__":
    main()
