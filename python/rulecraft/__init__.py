"""rulecraft: a rules engine for card and strategy games, for Python.

``Game`` loads a ruleset and its content once (the classic ruleset and the bolt decks are built
in); ``Game.new_game(seed)`` deals a ``State``. A state lists the pending decision's options
(``options()``: readable labels, in the order of their indexes), takes one (``apply(i)``: an
illegal index raises ``ValueError`` and changes nothing), and has ``clone()``, ``save()`` and
``Game.load(bytes)`` (so it pickles), ``current_player``, ``is_terminal()``, ``returns()``, the
event log and ``explain``. ``observe(player)`` gives a fixed-size float32 vector and the option
mask. ``play_random`` plays whole games in Rust with the GIL released.

The environments are in ``rulecraft.env`` (PettingZoo AEC, Gymnasium).
"""

from __future__ import annotations

import threading

import numpy as np

from ._rulecraft import DECISION_KINDS, Game, LoadError, RandomAgent, State, random_game_seeds

__all__ = [
    "DECISION_KINDS",
    "Game",
    "LoadError",
    "RandomAgent",
    "State",
    "classic",
    "play_random",
    "random_game_seeds",
]

_classic = None
_classic_lock = threading.Lock()


def classic() -> Game:
    """The classic ruleset and content built into the module, two players with the bolt deck
    (20 Mountain, 40 Lightning Bolt): the game ``rulecraft play`` plays by default. Loaded once."""
    global _classic
    with _classic_lock:
        if _classic is None:
            _classic = Game()
        return _classic


def play_random(n_games: int, seed: int = 0, threads: int = 1, game: Game | None = None,
                decks=None, max_decisions: int = 100_000) -> dict:
    """Plays ``n_games`` whole games between random agents in Rust, with the GIL released (many
    Python threads calling it at once use many cores), over ``threads`` threads of its own.

    The games are those of ``rulecraft play --games N --seed SEED``: game ``i``'s seed is derived
    from ``seed`` and ``i``, whatever thread plays it. Returns numpy arrays ``winners`` (player
    index, -1 for a draw or an unfinished game), ``turns``, ``decisions`` and ``finished``, and
    ``elapsed`` (seconds) and ``games_per_second``.
    """
    g = game if game is not None else classic()
    r = g._play_random(n_games, seed, threads, decks, max_decisions)
    elapsed = r["elapsed"]
    return {
        "winners": np.asarray(r["winners"], dtype=np.int64),
        "turns": np.asarray(r["turns"], dtype=np.int64),
        "decisions": np.asarray(r["decisions"], dtype=np.int64),
        "finished": np.asarray(r["finished"], dtype=bool),
        "elapsed": elapsed,
        "games_per_second": n_games / elapsed if elapsed > 0 else float("inf"),
    }
