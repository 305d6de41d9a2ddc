"""Point labels that dodge each other: each label takes the first offset around its point that
overlaps no marker, label or caption already drawn and stays inside the axes (matplotlib only,
imported by the plot functions that need it)."""
from __future__ import annotations


# Where a point label may go, in points from the point: right, left, above, below, then diagonals.
_LABEL_OFFSETS = ((8, 0, "left", "center"), (-8, 0, "right", "center"), (0, 8, "center", "bottom"),
                  (0, -8, "center", "top"), (7, 7, "left", "bottom"), (-7, 7, "right", "bottom"),
                  (7, -7, "left", "top"), (-7, -7, "right", "top"), (16, 10, "left", "bottom"),
                  (-16, 10, "right", "bottom"), (16, -10, "left", "top"), (-16, -10, "right", "top"))


def _overlap_area(a, b) -> float:
    """Area shared by two display-space boxes."""
    return max(0.0, min(a.x1, b.x1) - max(a.x0, b.x0)) * max(0.0, min(a.y1, b.y1) - max(a.y0, b.y0))


def place_labels(fig, ax, labels):
    """Annotate each point, choosing for each label the first offset that overlaps nothing already
    drawn (markers, labels, the region captions) and stays inside the axes; else the least-bad one."""
    import numpy as np
    from matplotlib.transforms import Bbox

    fig.draw_without_rendering()  # settle the constrained layout before measuring
    renderer = fig.canvas.get_renderer()
    axes_box = ax.get_window_extent(renderer)
    pad = 4 * fig.dpi / 72  # half a marker, in pixels
    taken = [text.get_window_extent(renderer) for text in ax.texts]
    curve_points = []
    for line in ax.get_lines():
        xy = ax.transData.transform(np.column_stack(line.get_data()))
        xy = xy[np.isfinite(xy).all(axis=1)]
        if len(xy) == 1:  # a marker
            taken.append(Bbox.from_extents(*(xy[0] - pad), *(xy[0] + pad)))
        else:
            curve_points.append(xy)

    def cost(box):
        overlap = sum(_overlap_area(box, other) for other in taken)
        outside = box.width * box.height - _overlap_area(box, axes_box)
        crossing = sum(bool(np.any((xy[:, 0] > box.x0) & (xy[:, 0] < box.x1) & (xy[:, 1] > box.y0)
                                   & (xy[:, 1] < box.y1))) for xy in curve_points)
        return 10 * (overlap + outside) + crossing  # hiding a marker or a label is far worse than crossing a curve

    for text, w, L, colour in labels:
        annotation = ax.annotate(text, (w, L), xytext=(0, 0), textcoords="offset points", fontsize=9, color=colour,
                                 zorder=9, gid=f"label:{text}", annotation_clip=False,
                                 bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none", alpha=0.75))
        annotation.set_in_layout(False)
        best = None
        for dx, dy, ha, va in _LABEL_OFFSETS:
            annotation.set(x=dx, y=dy, ha=ha, va=va)
            box = annotation.get_window_extent(renderer)
            score = cost(box) + (3 if abs(dx) > 8 else 0)  # the far offsets only to dodge a real clash
            if best is None or score < best[0]:
                best = (score, (dx, dy, ha, va), box)
            if score == 0:
                break
        _, (dx, dy, ha, va), box = best
        annotation.set(x=dx, y=dy, ha=ha, va=va)
        taken.append(box)
