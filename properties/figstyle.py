"""The one matplotlib style of the audit's figures (properties/audit.mplstyle).

Every plot function in properties/<paper>/figures.py draws inside `figure()`:

    with figstyle.figure(path, ncols=2, figsize=(9, 3.4)) as (fig, axs):
        ...

which selects the Agg backend, applies the style (font sizes, dpi 110, constrained layout, a
light grid, a colour-blind-safe cycle), saves the figure to `path` and closes it.  `apply()` only
sets the style globally.  No work at import (matplotlib is imported on first use).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

STYLE = Path(__file__).resolve().with_name("audit.mplstyle")


def apply():
    """Agg backend and the audit style, globally (for callers that draw without `figure`)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.style.use(str(STYLE))


@contextlib.contextmanager
def figure(path, nrows=1, ncols=1, **subplots_kw):
    """Yield (fig, axes) from plt.subplots(nrows, ncols, **subplots_kw) under the audit style;
    on a clean exit save to `path` (the style's dpi) and always close the figure."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    with plt.style.context(str(STYLE)):
        fig, axs = plt.subplots(nrows, ncols, **subplots_kw)
        try:
            yield fig, axs
            fig.savefig(path)
        finally:
            plt.close(fig)


def log_ticks(axis, values, labels=None, rotation=0):
    """Label exactly `values` on a log `axis` (ax.xaxis / ax.yaxis), minor-tick labels off: on an
    axis spanning less than a decade matplotlib labels the minor ticks too, and they overlap."""
    import matplotlib.ticker
    axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    labels = [f"{x:.3g}" for x in values] if labels is None else labels
    axis.set_ticks(list(values), labels, rotation=rotation)
