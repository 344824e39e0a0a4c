"""Decision-boundary pictures of a 2-D classifier, as PNG or SVG, with the standard library only.

The picture covers the data's bounding box plus a margin. The model is evaluated on a grid of
``(cells + 1)^2`` points; each pixel's score is the bilinear blend of its four grid corners, the
background takes the colour of the class the score's sign picks (score > 0: label +1), and the
boundary (score = 0) is drawn dark. Points are circles in their label's colour.

PNG is written by hand: the 8-byte signature, then IHDR (width, height, 8-bit RGB), one IDAT with
the zlib-compressed rows (each row starts with filter byte 0), and IEND; every chunk is
``length | type | data | CRC-32(type + data)``. SVG uses one rectangle per run of same-class cells
in a row and draws the boundary with marching squares (linear interpolation on the cell edges).
"""

from __future__ import annotations

import math
import os
import struct
import zlib
from typing import Any, Callable, Sequence, TypedDict, Unpack

__all__ = ["write_decision_boundary", "png_bytes", "svg_text", "COLORS"]

Point = tuple[float, float]
Predict = Callable[[list[Point]], list[float]]


class PictureOptions(TypedDict, total=False):
    """The keywords png_bytes and svg_text take after their three positional arguments."""

    size: int
    cells: int
    margin: float
    radius: float


#: Colours (RGB) by role; label -1 is blue, label +1 is orange.
COLORS = {
    "background-1": (207, 224, 245),
    "background+1": (250, 221, 200),
    "point-1": (31, 95, 191),
    "point+1": (217, 84, 30),
    "outline": (25, 25, 25),
    "boundary": (60, 60, 60),
}


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#%02x%02x%02x" % rgb


class _Frame:
    """Maps data coordinates to pixels (y grows upwards in data, downwards in pixels)."""

    def __init__(self, points: Sequence[Point], size: int, margin: float) -> None:
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        self.x0, self.x1 = min(xs) - margin, max(xs) + margin
        self.y0, self.y1 = min(ys) - margin, max(ys) + margin
        self.size = size

    def to_pixel(self, x: float, y: float) -> tuple[float, float]:
        px = (x - self.x0) / (self.x1 - self.x0) * self.size
        py = (self.y1 - y) / (self.y1 - self.y0) * self.size
        return px, py

    def grid(self, cells: int) -> list[Point]:
        """(cells + 1)^2 points, row by row from the top, left to right."""
        return [
            (self.x0 + (self.x1 - self.x0) * a / cells, self.y1 - (self.y1 - self.y0) * b / cells)
            for b in range(cells + 1)
            for a in range(cells + 1)
        ]


def _check(points: Sequence[Point], labels: Sequence[int], size: int, cells: int) -> None:
    if not points or len(points) != len(labels):
        raise ValueError(f"need one label per point and at least one point, got {len(points)} and {len(labels)}")
    if not 16 <= size <= 4096:
        raise ValueError(f"size must be between 16 and 4096 pixels, got {size}")
    if not 2 <= cells <= size:
        raise ValueError(f"cells must be between 2 and the size in pixels ({size}), got {cells}")
    for index, point in enumerate(points):
        if not _is_finite_pair(point):
            raise ValueError(
                f"point {index} is {point!r}: every point must be a pair (x, y) of finite numbers "
                "(no nan or infinity)"
            )
    # Finite points can still be too far apart to subtract (1e308 - -1e308 overflows to inf).
    for axis, name in ((0, "x"), (1, "y")):
        values = [float(point[axis]) for point in points]
        if not math.isfinite(max(values) - min(values)):
            raise ValueError(
                f"the points' {name} coordinates span from {min(values):g} to {max(values):g}, "
                "a range too wide to draw; rescale the data"
            )


def _is_finite_pair(point: Any) -> bool:
    """Whether a caller's point (anything at all: checked by trying) is two finite numbers."""
    try:
        x, y = point
        return math.isfinite(x) and math.isfinite(y)
    except (TypeError, ValueError):
        return False


def _scores_on_grid(predict: Predict, frame: _Frame, cells: int) -> list[list[float]]:
    flat = list(predict(frame.grid(cells)))
    n = cells + 1
    return [flat[b * n:(b + 1) * n] for b in range(n)]


def png_bytes(
    predict: Predict, points: Sequence[Point], labels: Sequence[int],
    size: int = 480, cells: int = 96, margin: float = 0.5, radius: float = 4.5,
) -> bytes:
    """The picture as PNG bytes (``size`` x ``size`` pixels, 8-bit RGB)."""
    _check(points, labels, size, cells)
    frame = _Frame(points, size, margin)
    grid = _scores_on_grid(predict, frame, cells)
    # Bilinear score per pixel centre, row by row.
    scale = cells / size
    columns = []
    for i in range(size):
        u = (i + 0.5) * scale
        a = min(int(u), cells - 1)
        columns.append((a, u - a))
    signs: list[list[bool]] = []
    for j in range(size):
        v = (j + 0.5) * scale
        b = min(int(v), cells - 1)
        fv = v - b
        top, bottom = grid[b], grid[b + 1]
        row = []
        for a, fu in columns:
            upper = top[a] + (top[a + 1] - top[a]) * fu
            lower = bottom[a] + (bottom[a + 1] - bottom[a]) * fu
            row.append(upper + (lower - upper) * fv > 0.0)
        signs.append(row)
    pixels = bytearray(size * size * 3)
    colour = {True: bytes(COLORS["background+1"]), False: bytes(COLORS["background-1"])}
    boundary = bytes(COLORS["boundary"])
    for j in range(size):
        row, below = signs[j], signs[min(j + 1, size - 1)]
        base = j * size * 3
        for i in range(size):
            s = row[i]
            edge = s != row[min(i + 1, size - 1)] or s != below[i]
            pixels[base + 3 * i:base + 3 * i + 3] = boundary if edge else colour[s]
    for (x, y), label in zip(points, labels):
        _disc(pixels, size, *frame.to_pixel(x, y), radius, COLORS["point+1" if label > 0 else "point-1"])
    return _encode_png(pixels, size, size)


def _disc(pixels: bytearray, size: int, cx: float, cy: float, radius: float, fill: tuple[int, int, int]) -> None:
    """A filled circle with a one-pixel dark outline."""
    outline = bytes(COLORS["outline"])
    inner = bytes(fill)
    r_out2, r_in2 = radius * radius, (radius - 1.2) ** 2
    for j in range(max(0, int(cy - radius) - 1), min(size, int(cy + radius) + 2)):
        for i in range(max(0, int(cx - radius) - 1), min(size, int(cx + radius) + 2)):
            d2 = (i + 0.5 - cx) ** 2 + (j + 0.5 - cy) ** 2
            if d2 <= r_out2:
                k = 3 * (j * size + i)
                pixels[k:k + 3] = inner if d2 <= r_in2 else outline


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _encode_png(pixels: bytearray, width: int, height: int) -> bytes:
    stride = width * 3
    raw = b"".join(b"\x00" + bytes(pixels[j * stride:(j + 1) * stride]) for j in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit, RGB, deflate, no filter, no interlace
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, 9)) + _chunk(b"IEND", b"")


def svg_text(
    predict: Predict, points: Sequence[Point], labels: Sequence[int],
    size: int = 480, cells: int = 96, margin: float = 0.5, radius: float = 4.5,
) -> str:
    """The picture as an SVG document."""
    _check(points, labels, size, cells)
    frame = _Frame(points, size, margin)
    grid = _scores_on_grid(predict, frame, cells)
    step = size / cells
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" viewBox="0 0 {size} {size}">',
        "<title>Decision boundary</title>",
        f'<rect width="{size}" height="{size}" fill="{_hex(COLORS["background-1"])}"/>',
        f'<g fill="{_hex(COLORS["background+1"])}" shape-rendering="crispEdges">',
    ]
    # A cell's class is the sign of the mean of its four corners; runs of +1 cells become one rect.
    for b in range(cells):
        a = 0
        while a < cells:
            if _cell_score(grid, a, b) > 0.0:
                start = a
                while a < cells and _cell_score(grid, a, b) > 0.0:
                    a += 1
                parts.append(
                    f'<rect x="{start * step:.2f}" y="{b * step:.2f}" width="{(a - start) * step:.2f}" '
                    f'height="{step:.2f}"/>'
                )
            else:
                a += 1
    parts.append("</g>")
    segments = _zero_crossings(grid, cells, step)
    if segments:
        path = " ".join(f"M{x0:.2f} {y0:.2f}L{x1:.2f} {y1:.2f}" for (x0, y0), (x1, y1) in segments)
        parts.append(f'<path d="{path}" fill="none" stroke="{_hex(COLORS["boundary"])}" stroke-width="2"/>')
    parts.append(f'<g stroke="{_hex(COLORS["outline"])}" stroke-width="1">')
    for (x, y), label in zip(points, labels):
        px, py = frame.to_pixel(x, y)
        fill = _hex(COLORS["point+1" if label > 0 else "point-1"])
        parts.append(f'<circle cx="{px:.2f}" cy="{py:.2f}" r="{radius}" fill="{fill}" data-label="{label}"/>')
    parts.append("</g></svg>")
    return "\n".join(parts) + "\n"


def _cell_score(grid: list[list[float]], a: int, b: int) -> float:
    return grid[b][a] + grid[b][a + 1] + grid[b + 1][a] + grid[b + 1][a + 1]


def _zero_crossings(grid: list[list[float]], cells: int, step: float) -> list[tuple[Point, Point]]:
    """Marching squares: in each cell, join the points where the score crosses 0 along its edges."""
    segments = []
    for b in range(cells):
        for a in range(cells):
            corners = [(a, b), (a + 1, b), (a + 1, b + 1), (a, b + 1)]
            values = [grid[v][u] for u, v in corners]
            crossings = []
            for k in range(4):
                (u0, v0), (u1, v1) = corners[k], corners[(k + 1) % 4]
                s0, s1 = values[k], values[(k + 1) % 4]
                if (s0 > 0.0) != (s1 > 0.0):
                    t = s0 / (s0 - s1)
                    crossings.append(((u0 + (u1 - u0) * t) * step, (v0 + (v1 - v0) * t) * step))
            # 2 crossings: one segment; 4 (a saddle): pair them up in edge order
            for k in range(0, len(crossings) - 1, 2):
                segments.append((crossings[k], crossings[k + 1]))
    return segments


def write_decision_boundary(
    path: str | os.PathLike[str], predict: Predict, points: Sequence[Point], labels: Sequence[int],
    **options: Unpack[PictureOptions],
) -> None:
    """Write the picture to ``path``; the suffix picks the format (.png or .svg).

    ``predict`` maps a list of (x, y) points to one score each (positive means label +1).
    """
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix == ".png":
        data = png_bytes(predict, points, labels, **options)
    elif suffix == ".svg":
        data = svg_text(predict, points, labels, **options).encode("utf-8")
    else:
        raise ValueError(f"cannot tell the format of {os.fspath(path)!r}: the name must end in .png or .svg")
    with open(path, "wb") as file:
        file.write(data)
