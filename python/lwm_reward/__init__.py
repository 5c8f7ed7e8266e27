"""lwm-data's SFT verifier rules as an RL reward (see reward.py; docs/exports.md "RL: verl and OpenRLHF")."""

from .reward import (  # noqa: F401
    DEFAULT_FIDELITY,
    DEFAULT_LENGTHS,
    FIDELITY_RULES,
    compute_score,
    fidelity,
    json_structure,
    line_similarity,
    parse_candidate,
    reward_func,
    search_fidelity,
    token_strings,
    tree_similarity,
    verify,
)
