"""chainrule.plot: PNG and SVG decision boundaries, decoded by a real browser (Chromium) and by hand."""

from __future__ import annotations

import base64
import re
import struct
import xml.etree.ElementTree as ET
import zlib

import pytest

from chainrule.plot import COLORS, png_bytes, svg_text, write_decision_boundary

# A classifier with a known boundary: score = x - 0.5, so label +1 right of the line x = 0.5.
POINTS = [(0.0, 0.0), (1.0, 1.0), (0.0, 1.0), (1.0, 0.0)]
LABELS = [-1, 1, -1, 1]


def predict(points):
    return [x - 0.5 for x, _ in points]


def read_png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, f"bad CRC in {kind!r}"
        chunks.append((kind, body))
        pos += 12 + length
    return chunks


def test_png_structure():
    data = png_bytes(predict, POINTS, LABELS, size=64, cells=16)
    chunks = read_png_chunks(data)
    assert [kind for kind, _ in chunks] == [b"IHDR", b"IDAT", b"IEND"]
    width, height, depth, colour_type, *_ = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (width, height, depth, colour_type) == (64, 64, 8, 2)
    raw = zlib.decompress(chunks[1][1])
    assert len(raw) == 64 * (1 + 64 * 3)
    # With margin 0.5 the picture spans x in [-0.5, 1.5]: pixel column 4 is at x ~ -0.36 (label -1),
    # column 60 at x ~ 1.39 (label +1). Row 32, filter byte first.
    row = raw[32 * 193 + 1:33 * 193]
    assert tuple(row[4 * 3:4 * 3 + 3]) == COLORS["background-1"]
    assert tuple(row[60 * 3:60 * 3 + 3]) == COLORS["background+1"]


def test_svg_structure():
    svg = svg_text(predict, POINTS, LABELS, size=100, cells=10)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    circles = root.findall(f".//{ns}circle")
    assert [c.get("data-label") for c in circles] == ["-1", "1", "-1", "1"]
    path = root.find(f".//{ns}path").get("d")
    # The boundary x = 0.5 is the middle of the picture: every segment sits at pixel x = 50.
    xs = {float(x) for x in re.findall(r"[ML]([-0-9.]+) ", path)}
    assert xs and all(x == pytest.approx(50.0) for x in xs)


def test_write_picks_format_by_suffix(tmp_path):
    write_decision_boundary(tmp_path / "a.png", predict, POINTS, LABELS, size=32, cells=8)
    write_decision_boundary(tmp_path / "a.svg", predict, POINTS, LABELS, size=32, cells=8)
    assert (tmp_path / "a.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "a.svg").read_text().startswith("<svg")
    with pytest.raises(ValueError, match=".png or .svg"):
        write_decision_boundary(tmp_path / "a.gif", predict, POINTS, LABELS)


@pytest.mark.parametrize(
    "kwargs, message",
    [({"size": 8}, "size must be"), ({"cells": 1}, "cells must be")],
)
def test_bad_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        png_bytes(predict, POINTS, LABELS, **kwargs)
    with pytest.raises(ValueError, match="one label per point"):
        svg_text(predict, POINTS, LABELS[:2])


@pytest.mark.parametrize("draw", [png_bytes, svg_text], ids=["png", "svg"])
@pytest.mark.parametrize(
    "bad, shown",
    [
        ((float("nan"), 0.5), "point 2 is (nan, 0.5)"),
        ((0.5, float("inf")), "point 2 is (0.5, inf)"),
        ((float("-inf"), 0.0), "point 2 is (-inf, 0.0)"),
        ((0.5,), "point 2 is (0.5,)"),
    ],
)
def test_a_point_that_is_not_two_finite_numbers_is_refused_by_name(tmp_path, draw, bad, shown):
    points = [(0.0, 0.0), (1.0, 1.0), bad, (1.0, 0.0)]
    with pytest.raises(ValueError) as caught:
        draw(predict, points, LABELS, size=32, cells=8)
    assert shown in str(caught.value) and "finite numbers" in str(caught.value)
    target = tmp_path / f"picture.{draw.__name__[:3]}"
    with pytest.raises(ValueError, match="finite numbers"):
        write_decision_boundary(target, predict, points, LABELS, size=32, cells=8)
    assert not target.exists()


@pytest.mark.parametrize("draw", [png_bytes, svg_text], ids=["png", "svg"])
def test_finite_points_too_far_apart_to_draw_are_refused(draw):
    with pytest.raises(ValueError, match="x coordinates span from -1e[+]308 to 1e[+]308"):
        draw(predict, [(-1e308, 0.0), (1e308, 1.0)], [-1, 1], size=32, cells=8)


PIXEL_SCRIPT = """async ([url, probes]) => {
  const img = new Image();
  img.src = url;
  await img.decode();
  const canvas = document.createElement('canvas');
  canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
  const ctx = canvas.getContext('2d');
  ctx.drawImage(img, 0, 0);
  return {size: [img.naturalWidth, img.naturalHeight],
          pixels: probes.map(([x, y]) => Array.from(ctx.getImageData(x, y, 1, 1).data.slice(0, 3)))};
}"""


@pytest.mark.timeout(120)
def test_chromium_decodes_both_pictures(browser):
    size = 200
    # Probes (pixels): far left (-1 background), far right (+1 background), the centre of the
    # +1 point at data (1, 1) -> pixel (150, 50) and of the -1 point at (0, 0) -> pixel (50, 150).
    probes = [[10, 100], [190, 100], [150, 50], [50, 150]]
    expected = [COLORS["background-1"], COLORS["background+1"], COLORS["point+1"], COLORS["point-1"]]
    png = png_bytes(predict, POINTS, LABELS, size=size, cells=20)
    svg = svg_text(predict, POINTS, LABELS, size=size, cells=20)
    urls = [
        "data:image/png;base64," + base64.b64encode(png).decode(),
        "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode(),
    ]
    page = browser.new_page()
    try:
        for url in urls:
            result = page.evaluate(PIXEL_SCRIPT, [url, probes])
            assert result["size"] == [size, size]
            for got, want in zip(result["pixels"], expected):
                assert got == pytest.approx(list(want), abs=3)
    finally:
        page.close()
