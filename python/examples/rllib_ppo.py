"""PPO from RLlib on the classic ruleset's two-player game, one policy shared by both players
(self-play), with RLlib's action-masking module: illegal options get no probability.

    pip install "ray[rllib]" torch
    python examples/rllib_ppo.py --iterations 3

The environment is rulecraft's PettingZoo AEC environment in RLlib's ``PettingZooEnv`` wrapper;
its observation is a dict of ``observations`` (what the player sees) and ``action_mask``, which
``ActionMaskingTorchRLModule`` (from RLlib's examples) reads. Add ``--address`` to train on a
cluster.
"""

from __future__ import annotations

import argparse

import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
    ActionMaskingTorchRLModule,
)
from ray.tune.registry import register_env

from rulecraft.env import RulecraftAEC


def make_env(_config=None):
    return PettingZooEnv(RulecraftAEC(observation_key="observations"))


def config(env_runners: int = 1) -> PPOConfig:
    register_env("rulecraft_classic", make_env)
    return (
        PPOConfig()
        .environment("rulecraft_classic")
        .env_runners(num_env_runners=env_runners)
        .multi_agent(
            policies={"shared"},
            policy_mapping_fn=lambda agent_id, *args, **kwargs: "shared",
        )
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "shared": RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule,
                        model_config={"head_fcnet_hiddens": [128, 128]},
                    )
                }
            )
        )
        .training(train_batch_size_per_learner=2000, minibatch_size=250, num_epochs=2)
    )


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--address", default=None)
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--env-runners", type=int, default=1)
    a = ap.parse_args(argv)
    if not ray.is_initialized():
        ray.init(address=a.address, include_dashboard=False)
    algo = config(a.env_runners).build_algo()
    out = []
    for i in range(a.iterations):
        r = algo.train()
        runners = r.get("env_runners", {})
        steps = runners.get("num_env_steps_sampled_lifetime")
        length = runners.get("episode_len_mean")
        print(f"iteration {i + 1}: env steps {steps}, mean episode length {length}")
        out.append(r)
    algo.stop()
    return out


if __name__ == "__main__":
    main()
