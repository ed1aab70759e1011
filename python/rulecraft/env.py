"""Environments over rulecraft games: a PettingZoo AEC environment (every player an agent) and a
Gymnasium environment (one player against the built-in random agent).

An observation is a dict: ``observation``, the float32 vector of what the agent sees
(``Game.observation_parts()`` names its parts), and ``action_mask``, int8, 1 for each legal option
of the agent's pending decision. The action is an option's index (``State.options()`` gives the
labels). The mask of the agent to act is never all zeros while the game goes on; it lists at most
``max_options`` options (64 by default; the bolt decks' games offer at most a few more than the
cards in hand, so the bound is never reached there: a decision with more raises ``ValueError`` as it is observed,
instead of hiding options).
"""

from __future__ import annotations

import numpy as np

from . import Game, RandomAgent, classic

try:
    import gymnasium
    from gymnasium import spaces
except ImportError as e:  # pragma: no cover
    raise ImportError("rulecraft.env needs gymnasium: pip install gymnasium pettingzoo") from e


def _spaces(game: Game, key: str = "observation"):
    obs = spaces.Dict(
        {
            key: spaces.Box(-np.inf, np.inf, (game.observation_size,), np.float32),
            "action_mask": spaces.Box(0, 1, (game.max_options,), np.int8),
        }
    )
    return obs, spaces.Discrete(game.max_options)


def _game_seed(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2**63 - 1))


try:
    from pettingzoo import AECEnv
    from pettingzoo.utils import AgentSelector  # noqa: F401  (the version check)
except ImportError:  # pragma: no cover
    AECEnv = object


class RulecraftAEC(AECEnv):
    """A PettingZoo AEC environment of one rulecraft game (by default the classic ruleset with
    the bolt deck for two players; ``game=Game(...)`` and ``decks=[...]`` for others).

    The agents are ``player_0``, ``player_1``, ... in turn order; the agent to act is the player
    the pending decision asks. Rewards come at the end: 1 for the winner, -1 for the others, 0 for
    all in a draw. ``max_steps`` truncates a game after that many decisions (none by default).
    ``reset(seed=s)`` deals the same game for the same ``s``. ``observation_key`` renames the
    observation's key (RLlib's action-masking module reads ``observations``).
    """

    metadata = {
        "render_modes": ["human", "ansi"],
        "name": "rulecraft_classic_v0",
        "is_parallelizable": False,
    }

    def __init__(self, game: Game | None = None, decks=None, max_steps: int | None = None,
                 render_mode: str | None = None, observation_key: str = "observation"):
        super().__init__()
        self._key = observation_key
        self.game = game if game is not None else classic()
        self.decks = decks
        self.max_steps = max_steps
        self.render_mode = render_mode
        n = len(self.game.players)
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        obs, act = _spaces(self.game, observation_key)
        self.observation_spaces = {a: obs for a in self.possible_agents}
        self.action_spaces = {a: act for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self.state = None

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed=None, options=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.state = self.game.new_game(_game_seed(self._rng), self.decks)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.steps = 0
        self.agent_selection = self.possible_agents[self.state.current_player]

    def observe(self, agent):
        obs, mask = self.state.observe(self._index[agent])
        return {self._key: obs, "action_mask": mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        nxt = self.state.step(int(action))
        self.steps += 1
        if nxt < 0:
            for a, r in zip(self.possible_agents, self.state.returns()):
                self.rewards[a] = r
                self.terminations[a] = True
            self._accumulate_rewards()
        else:
            self.agent_selection = self.possible_agents[nxt]
            if self.max_steps is not None and self.steps >= self.max_steps:
                for a in self.agents:
                    self.truncations[a] = True
        if self.render_mode == "human":
            self.render()

    def render(self):
        if self.state is None:
            return None
        text = f"{self.state!r}\n" + "".join(
            f"  {i}: {label}\n" for i, label in enumerate(self.state.options())
        )
        if self.render_mode == "human":
            print(text, end="")
            return None
        return text

    def close(self):
        pass


def env(**kwargs) -> RulecraftAEC:
    """The AEC environment, with PettingZoo's usual wrappers left out (they cost time per step
    and the environment checks its own actions: an illegal index raises ``ValueError``)."""
    return RulecraftAEC(**kwargs)


class RulecraftGym(gymnasium.Env):
    """A Gymnasium environment: the agent plays ``player`` (0 by default) of a two-player game
    against the built-in random agent (``RandomAgent``, seeded from the reset's seed), whose
    decisions are answered in Rust between the agent's.

    The reward is the agent's return at the end (1 win, -1 loss, 0 draw). An action that is no
    legal option (the mask says which are) leaves the game as it was and gives
    ``illegal_reward`` (-1 by default), with ``info["illegal"] = True``.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, game: Game | None = None, decks=None, player: int = 0,
                 illegal_reward: float = -1.0, render_mode: str | None = None):
        super().__init__()
        self.game = game if game is not None else classic()
        self.decks = decks
        self.player = player
        self.illegal_reward = illegal_reward
        self.render_mode = render_mode
        self.observation_space, self.action_space = _spaces(self.game)
        self.state = None
        self.opponent = None

    def _obs(self):
        obs, mask = self.state.observe(self.player)
        return {"observation": obs, "action_mask": mask}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.state = self.game.new_game(_game_seed(self.np_random), self.decks)
        self.opponent = RandomAgent(_game_seed(self.np_random))
        self.state.play_others(self.player, self.opponent)
        return self._obs(), {}

    def step(self, action):
        a = int(action)
        if not 0 <= a < self.state.num_options():
            return self._obs(), float(self.illegal_reward), False, False, {"illegal": True}
        self.state.apply(a)
        self.state.play_others(self.player, self.opponent)
        done = self.state.is_terminal()
        reward = float(self.state.returns()[self.player]) if done else 0.0
        return self._obs(), reward, done, False, {}

    def render(self):
        if self.state is None:
            return None
        return f"{self.state!r}\n" + "".join(
            f"  {i}: {label}\n" for i, label in enumerate(self.state.options())
        )
