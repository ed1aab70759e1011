"""The PettingZoo AEC environment and the Gymnasium environment."""

import numpy as np
import pytest

from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

from rulecraft.env import RulecraftAEC, RulecraftGym, env


def test_pettingzoo_api():
    api_test(env(), num_cycles=300)


def test_pettingzoo_seed():
    seed_test(env, num_cycles=300)


def test_action_space_is_one_object():
    e = env()
    assert e.action_space("player_0") is e.action_space("player_0")
    assert e.observation_space("player_1") is e.observation_space("player_1")


def test_random_games_end_with_rewards():
    e = env()
    rng = np.random.default_rng(0)
    for game in range(3):
        e.reset(seed=game)
        totals = dict.fromkeys(e.possible_agents, 0.0)
        for agent in e.agent_iter():
            obs, reward, term, trunc, _ = e.last()
            totals[agent] += reward
            if term or trunc:
                e.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            assert legal.size > 0
            e.step(int(rng.choice(legal)))
        assert sorted(totals.values()) in ([-1.0, 1.0], [0.0, 0.0])


def test_illegal_action_raises_and_changes_nothing():
    e = env()
    e.reset(seed=1)
    before = e.state.save()
    with pytest.raises(ValueError):
        e.step(e.game.max_options - 1)
    assert e.state.save() == before


def test_gymnasium_check_env():
    check_env(RulecraftGym(), skip_render_check=True)


def test_gymnasium_game_against_random():
    g = RulecraftGym()
    obs, _ = g.reset(seed=3)
    rng = np.random.default_rng(3)
    done, total = False, 0.0
    while not done:
        legal = np.flatnonzero(obs["action_mask"])
        assert legal.size > 0
        obs, r, done, trunc, info = g.step(int(rng.choice(legal)))
        total += r
    assert total in (-1.0, 0.0, 1.0)
    obs2, _ = g.reset(seed=3)
    assert obs2["observation"].tobytes() == g.reset(seed=3)[0]["observation"].tobytes()
    # An illegal action: nothing changes, the penalty is given.
    before = g.state.save()
    _, r, done, _, info = g.step(g.game.max_options - 1)
    assert info["illegal"] and r == -1.0 and not done and g.state.save() == before


def test_aec_class_with_other_decks():
    bolt = [("Mountain", 24), ("Lightning Bolt", 36)]
    e = RulecraftAEC(decks=[bolt, bolt])
    e.reset(seed=0)
    assert e.agent_selection in e.possible_agents
