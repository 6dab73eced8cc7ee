"""The audit itself: claims (registry), checks with thresholds and their provenance, the
alternatives every property must reject (world), and the per-paper properties.

Public API for a property (built-in or a researcher's conjecture):

    from properties import (Claim, register, audits, examples, paper_example, rival, null,
                            Tolerance, Threshold, check_close, check_at_least, check_order,
                            check_trend)
"""

from properties.check import (ClaimMismatch, Inconclusive, NoPower, PropertyError, Threshold,
                              Tolerance, check_at_least, check_close, check_order, check_trend,
                              examples, loglog_slope, order_slope_tolerance)
from properties.registry import REGISTRY, Alternative, Claim, attach_plot, null, register, rival
from properties.world import World, audits, paper_example

__all__ = ["Claim", "register", "attach_plot", "REGISTRY", "audits", "examples", "rival", "null",
           "Alternative", "World", "Tolerance", "Threshold", "check_close", "check_at_least",
           "check_order", "check_trend", "loglog_slope", "ClaimMismatch", "NoPower",
           "PropertyError", "Inconclusive", "paper_example", "order_slope_tolerance"]
