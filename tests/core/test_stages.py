"""Stages: singleton instances of distinct classes, short reprs, pickled by reference."""

from __future__ import annotations

import copy
import pickle

import pytest

import rlkit as rk
from rlkit.core import stages
from rlkit.core.stages import STAGES

ALL = [
    (rk.PRE_EXPERIMENT_STAGE, rk.PreExperimentStage, "PreExperiment", "pre_experiment"),
    (rk.PRE_EPISODE_STAGE, rk.PreEpisodeStage, "PreEpisode", "pre_episode"),
    (rk.PRE_ACT_STAGE, rk.PreActStage, "PreAct", "pre_act"),
    (rk.POST_ACT_STAGE, rk.PostActStage, "PostAct", "post_act"),
    (rk.POST_EPISODE_STAGE, rk.PostEpisodeStage, "PostEpisode", "post_episode"),
    (rk.POST_EXPERIMENT_STAGE, rk.PostExperimentStage, "PostExperiment", "post_experiment"),
]


@pytest.mark.parametrize("stage, cls, name, method_name", ALL)
def test_stage_identity_and_repr(stage, cls, name, method_name):
    assert type(stage) is cls and isinstance(stage, rk.AbstractStage)
    assert repr(stage) == str(stage) == name
    assert stage.method_name == method_name
    assert getattr(rk, stage.constant) is stage
    assert getattr(rk.AbstractHook, method_name)  # the hook method of that stage exists


@pytest.mark.parametrize("stage", [s for s, *_ in ALL])
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_stages_pickle_by_reference(stage, protocol):
    assert pickle.loads(pickle.dumps(stage, protocol=protocol)) is stage
    assert copy.copy(stage) is stage
    assert copy.deepcopy(stage) is stage
    assert copy.deepcopy({"stage": [stage]})["stage"][0] is stage


def test_stages_in_run_order_and_distinct():
    assert STAGES == tuple(s for s, *_ in ALL)
    assert len({type(s) for s in STAGES}) == 6
    assert len(set(STAGES)) == 6  # hashable, usable as dict keys


def test_stages_have_no_instance_state():
    with pytest.raises(AttributeError):
        rk.POST_ACT_STAGE.extra = 1  # __slots__: nothing can be attached


def test_stage_module_exports_match_rlkit():
    for name in stages.__all__:
        if name != "STAGES":  # the tuple of all stages is plumbing, importable from its module
            assert getattr(rk, name) is getattr(stages, name)
