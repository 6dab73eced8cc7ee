"""The audit itself: claims (registry), checks with thresholds and their provenance, the
alternatives every property must reject (world), and the per-paper properties.

Public API for a property (built-in or a researcher's conjecture):

    from properties import (Claim, register, audits, examples, paper_example, rival, null,
                            refinement,
                            Tolerance, Threshold, check_close, check_at_least, check_order,
                            check_trend, check_mc_mean, check_bound, check_whp, check_event_order,
                            check_mean_at_least, check_paired_order, check_above_noise,
                            check_count_at_most,
                            check_beyond_permutations, check_estimate, clustered_mean,
                            clustered_ratio, clustered_fractions, clustered_slope)

One procedure per kind of statement (properties.procedures, properties.check): a claim file
declares the quantity and the closed form; the procedure owns the critical value, the standard
error, the rate and the smallest departure it detects.
"""

import importlib

# Lazy (PEP 562): the names load their module on first use, so importing `properties.plugin`
# (a pytest11 entry point, loaded in every project that has this package installed) does not
# import scipy, sympy or torch until an audit asks for them.
_WHERE = {
    **dict.fromkeys(("ClaimMismatch", "Inconclusive", "NoPower", "PropertyError", "Threshold",
                     "Tolerance", "check_at_least", "check_close", "check_order", "check_trend",
                     "examples", "loglog_slope", "order_slope_tolerance"), "properties.check"),
    "clustered_slope": "properties.trend",
    **dict.fromkeys(("REGISTRY", "Alternative", "Claim", "attach_plot", "null", "register",
                     "rival"), "properties.registry"),
    **dict.fromkeys(("World", "audits", "paper_example"), "properties.world"),
    **dict.fromkeys(("Refinement", "refinement", "outside_condition"), "properties.outcomes"),
    **dict.fromkeys(("check_mc_mean", "check_bound", "check_whp", "check_event_order",
                     "check_estimate", "clustered_mean", "clustered_ratio",
                     "clustered_fractions",
                     "check_mean_at_least", "check_paired_order", "check_above_noise",
                     "check_count_at_most", "check_beyond_permutations"),
                    "properties.procedures"),
}


def __getattr__(name):
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module 'properties' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_WHERE))


__all__ = ["Claim", "register", "attach_plot", "REGISTRY", "audits", "examples", "rival", "null",
           "refinement", "Refinement",
           "Alternative", "World", "Tolerance", "Threshold", "check_close", "check_at_least",
           "check_order", "check_trend", "loglog_slope", "ClaimMismatch", "NoPower",
           "PropertyError", "Inconclusive", "paper_example", "order_slope_tolerance",
           "check_mc_mean", "check_bound", "check_whp", "check_event_order",
           "check_mean_at_least", "check_paired_order", "check_above_noise",
           "check_count_at_most", "check_beyond_permutations", "check_estimate", "clustered_mean",
           "clustered_ratio", "clustered_fractions", "clustered_slope", "outside_condition"]
