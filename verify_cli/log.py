"""The transparency log from the verifier's side, in three parts (the tree math is
:mod:`tlog`):

- :mod:`verify_cli.log_state` — the heads and checkpoints seen before (the state file), and
  the consistency check of a new one against them (a fork otherwise);
- :mod:`verify_cli.log_check` — the ``log`` step of ``verify`` (a transcript's record is in
  the log, by a server's proof, a proof file, or a tlog-proof and a policy);
- :mod:`verify_cli.monitor` — ``verify log``, the monitor over the log's tiles.

This module gathers their public names.
"""

from tlog import CompactRange, ProofError, consistent, leaf_hash, node_hash, root_from_inclusion

from .log_check import (
    apply_log_checks,
    check_inclusion,
    check_transcript,
    load_proofs,
    log_hook,
    open_state,
)
from .log_state import (
    Fetch,
    ForkDetected,
    Head,
    HeadState,
    HttpFetch,
    LogCheckFailed,
    default_state_path,
    parse_head,
    reconcile,
    reconcile_checkpoint,
)
from .monitor import MonitorResult, audit, check_leaf, log_cmd

__all__ = [
    "CompactRange",
    "Fetch",
    "ForkDetected",
    "Head",
    "HeadState",
    "HttpFetch",
    "LogCheckFailed",
    "MonitorResult",
    "ProofError",
    "apply_log_checks",
    "audit",
    "check_inclusion",
    "check_leaf",
    "check_transcript",
    "consistent",
    "default_state_path",
    "leaf_hash",
    "load_proofs",
    "log_cmd",
    "log_hook",
    "node_hash",
    "open_state",
    "parse_head",
    "reconcile",
    "reconcile_checkpoint",
    "root_from_inclusion",
]
