"""The game API: options and answers by index, clone, save and load, pickling, observations,
errors that change nothing, and whole games in Rust."""

import pickle
import threading

import numpy as np
import pytest

import rulecraft
from rulecraft import Game, LoadError, RandomAgent


@pytest.fixture(scope="module")
def game():
    return rulecraft.classic()


def random_answers(state, agent, limit=100_000):
    """Plays `state` to its end with `agent`, returning the answers."""
    answers = []
    while not state.is_terminal() and len(answers) < limit:
        i = agent.choose(state)
        state.apply(i)
        answers.append(i)
    return answers


def test_same_seed_same_game(game):
    a, b = game.new_game(7), game.new_game(7)
    assert a.save() == b.save()
    assert a.options() == b.options()
    c = game.new_game(8)
    assert c.save() != a.save()


def test_options_have_labels_and_pass_last(game):
    s = game.new_game(1)
    assert s.current_player in (0, 1)
    labels = s.options()
    assert labels and all(isinstance(x, str) for x in labels)
    if s.decision_kind == "play":
        assert labels[-1] == "pass"
    assert s.legal_actions() == list(range(len(labels)))


@pytest.mark.parametrize("bad", [-1, 10_000])
def test_illegal_index_raises_and_changes_nothing(game, bad):
    s = game.new_game(3)
    before = s.save()
    with pytest.raises(ValueError):
        s.apply(bad)
    with pytest.raises(ValueError):
        s.apply(s.num_options())
    assert s.save() == before


def test_clone_is_independent(game):
    s = game.new_game(5)
    before = s.save()
    c = s.clone()
    random_answers(c, RandomAgent(1), limit=40)
    assert s.save() == before
    assert c.save() != before


def test_whole_game_ends_with_returns(game):
    s = game.new_game(11)
    random_answers(s, RandomAgent(2))
    assert s.is_terminal()
    assert s.current_player is None
    assert s.num_options() == 0
    r = s.returns()
    assert sorted(r) in ([-1.0, 1.0], [0.0, 0.0])
    if s.winner is not None:
        assert r[s.winner] == 1.0
    with pytest.raises(ValueError):
        s.apply(0)


def test_same_seed_and_answers_same_observations(game):
    runs = []
    for _ in range(2):
        s = game.new_game(21)
        agent = RandomAgent(9)
        seen = []
        while not s.is_terminal():
            p = s.current_player
            obs, mask = s.observe(p)
            seen.append(obs.tobytes() + mask.tobytes())
            s.apply(agent.choose(s))
        runs.append(seen)
    assert runs[0] == runs[1]


def test_mask_matches_options_and_is_never_empty(game):
    for seed in range(5):
        s = game.new_game(seed)
        agent = RandomAgent(seed)
        while not s.is_terminal():
            p = s.current_player
            obs, mask = s.observe(p)
            assert obs.dtype == np.float32 and obs.shape == (game.observation_size,)
            assert mask.dtype == np.int8 and mask.shape == (game.max_options,)
            n = s.num_options()
            assert n > 0
            assert mask[:n].all() and not mask[n:].any()
            for other in range(s.num_players):
                if other != p:
                    assert not s.observe(other)[1].any()
            s.apply(agent.choose(s))
        assert not s.observe(0)[1].any()


def test_observation_sees_life_and_hand(game):
    s = game.new_game(4)
    parts = {name: (at, n) for name, at, n in game.observation_parts()}
    at, n = parts["player 0 (the observer)"]
    obs, _ = s.observe(0)
    # The player's part: lost, then the ruleset's properties (life first: 20).
    assert obs[at] == 0.0 and obs[at + 1] == 20.0
    # Own cards by class: the opening hand.
    at, k = parts["own cards by class: hand"]
    assert obs[at:at + k].sum() == 7
    # The opponent's hand is counted, not shown.
    at, n = parts["player 1"]
    zones = [z for z in ("library", "hand", "batch", "play", "graveyard")]
    assert obs[at + n - len(zones) + zones.index("hand")] >= 7


def test_save_load_goes_on_alike(game):
    s = game.new_game(13)
    random_answers(s, RandomAgent(4), limit=30)
    loaded = game.load(s.save())
    assert loaded.save() == s.save()
    assert loaded.options() == s.options()
    a, b = RandomAgent(6), RandomAgent(6)
    random_answers(s, a)
    random_answers(loaded, b)
    assert s.save() == loaded.save()
    assert s.returns() == loaded.returns()


def test_pickle_state_and_game(game):
    s = game.new_game(17)
    random_answers(s, RandomAgent(3), limit=25)
    t = pickle.loads(pickle.dumps(s))
    assert t.save() == s.save()
    assert t.options() == s.options()
    g = pickle.loads(pickle.dumps(game))
    assert g.players == game.players
    assert g.new_game(2).save() == game.new_game(2).save()


def test_corrupted_save_raises(game):
    s = game.new_game(1)
    data = s.save()
    with pytest.raises(ValueError):
        game.load(data[: len(data) // 2])
    with pytest.raises(ValueError):
        game.load(b"not a save")
    with pytest.raises(ValueError):
        game.load(data.replace(b'"turn":', b'"turn":"x",'))


def test_log_and_explain(game):
    s = game.new_game(2)
    random_answers(s, RandomAgent(5), limit=60)
    log = s.log()
    assert log and all(isinstance(x, str) for x in log)
    assert "life" in s.explain("Ann")
    oid = next(o for o, name, _, zone in s.objects() if name == "Lightning Bolt")
    assert s.explain(oid, "colors").startswith("colors = red")
    assert s.explain(oid).startswith("Lightning Bolt (object #")
    with pytest.raises(ValueError):
        s.explain(oid, "no_such_characteristic")
    with pytest.raises(ValueError):
        s.explain(10_000_000)


def test_wrong_deck_raises_load_error(game):
    with pytest.raises(LoadError, match="no deck `nope`"):
        game.new_game(1, ["nope", "bolt"])
    with pytest.raises(LoadError, match="Lightning Bolt"):
        game.new_game(1, ["20 Mountain\n40 Lightning Blot\n", "bolt"])
    with pytest.raises(LoadError, match="unknown card"):
        game.new_game(1, [[("Mountain", 20), ("Lightning Blot", 40)], "bolt"])
    with pytest.raises(ValueError):
        game.new_game(1, ["bolt"])


def test_decks_as_lists(game):
    bolt = [("Mountain", 20), ("Lightning Bolt", 40)]
    assert game.new_game(9, [bolt, bolt]).save() == game.new_game(9).save()


def test_ruleset_error_names_file_line_col():
    with pytest.raises(LoadError, match=r"ruleset\.rules:2:\d+:"):
        Game.from_text('ruleset "x" {\n    characteristic power: nmber\n}\n', [])
    with pytest.raises(LoadError, match="no ruleset"):
        Game("no_such_ruleset", ["classic"])


def test_play_random_summary_and_seeds():
    r = rulecraft.play_random(20, seed=5)
    assert r["winners"].shape == (20,) and r["turns"].shape == (20,)
    assert set(r["winners"].tolist()) <= {-1, 0, 1}
    assert (r["decisions"] > 0).all() and r["finished"].all()
    again = rulecraft.play_random(20, seed=5, threads=2)
    for k in ("winners", "turns", "decisions"):
        assert (r[k] == again[k]).all()
    other = rulecraft.play_random(20, seed=6)
    assert (r["decisions"] != other["decisions"]).any()


def test_play_random_from_python_threads():
    out = [None] * 2
    def run(i):
        out[i] = rulecraft.play_random(10, seed=i)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(2):
        assert (out[i]["decisions"] == rulecraft.play_random(10, seed=i)["decisions"]).all()


def test_play_random_plays_the_games_of_the_api(game):
    r = rulecraft.play_random(4, seed=9)
    for i in range(4):
        seed, agent_seeds = rulecraft.random_game_seeds(9, i, 2)
        s = game.new_game(seed)
        agents = [RandomAgent(a) for a in agent_seeds]
        decisions = 0
        while not s.is_terminal():
            s.apply(agents[s.current_player].choose(s))
            decisions += 1
        assert decisions == r["decisions"][i]
        assert s.turn == r["turns"][i]
        assert (s.winner if s.winner is not None else -1) == r["winners"][i]


def test_more_options_than_the_mask_raises():
    small = Game(max_options=2)
    s = small.new_game(0)
    agent = RandomAgent(0)
    while not s.is_terminal() and s.num_options() <= 2:
        s.apply(agent.choose(s))
    assert not s.is_terminal()
    with pytest.raises(ValueError, match="max_options"):
        s.observe(s.current_player)
    # The other player's view has no mask to overflow.
    s.observe(1 - s.current_player)


def test_game_default_decks(game):
    mixed = [("Mountain", 24), ("Lightning Bolt", 36)]
    g = Game(decks=[mixed, "bolt"])
    assert g.new_game(3).save() == game.new_game(3, [mixed, "bolt"]).save()
    assert g.new_game(3).save() != game.new_game(3).save()
    with pytest.raises(LoadError, match="no deck"):
        Game(decks=["nope", "bolt"])
    with pytest.raises(LoadError, match="Lightning Bolt"):
        Game(decks=[[("Lightning Blot", 40)], "bolt"])
    # A game pickles with its decks.
    assert pickle.loads(pickle.dumps(g)).new_game(3).save() == g.new_game(3).save()
