"""The Ray self-play example on a local two-CPU Ray, with a few hundred games."""

import os
import sys

import pytest

import ray  # Ray core is no optional part of the tests

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import ray_selfplay  # noqa: E402

import rulecraft  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_self_play_on_two_workers(local_ray, capsys):
    r = ray_selfplay.main(["--workers", "2", "--games", "300", "--batch", "50"])
    assert r["games"] == 300
    assert sum(r["wins"]) + r["draws"] == 300
    assert len(r["per_worker"]) == 2
    out = capsys.readouterr().out
    assert "games per second" in out and "worker 1:" in out
    # The same games as one process plays: batches are seeded alike wherever they run.
    local = [rulecraft.play_random(50, seed=1 + i) for i in range(6)]
    assert r["decisions"] == sum(int(x["decisions"].sum()) for x in local)


def test_state_travels_to_a_worker(local_ray):
    state = rulecraft.classic().new_game(4)
    w = ray_selfplay.SelfPlayWorker.remote(rulecraft.classic())
    remote = ray.get(w.play_out.remote(state, 1))
    agent = rulecraft.RandomAgent(1)
    while not state.is_terminal():
        state.apply(agent.choose(state))
    assert remote == state.returns()


def test_rllib_ppo_trains():
    # RLlib needs torch and its own extras; CI installs neither (this test is skipped there).
    pytest.importorskip("torch")
    pytest.importorskip("ray.rllib")
    import rllib_ppo

    results = rllib_ppo.main(["--iterations", "1"])
    assert len(results) == 1
