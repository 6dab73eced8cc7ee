"""The audit itself: claims (registry), checks with error models, and per-paper properties.

Public API for a property (built-in or a researcher's conjecture):

    from properties import Claim, register, audits, examples, Tolerance, check_close, \
        check_at_least, check_order
"""

from properties.check import (ClaimMismatch, NoPower, Tolerance, audits, check_at_least,
                              check_close, check_order, examples, loglog_slope)
from properties.registry import REGISTRY, Claim, attach_plot, register

__all__ = ["Claim", "register", "attach_plot", "REGISTRY", "audits", "examples", "Tolerance", "check_close",
           "check_at_least", "check_order", "loglog_slope", "ClaimMismatch", "NoPower"]
