"""Small RGB pictures of dice and text, drawn with numpy alone (no pygame or Pillow needed)."""

from __future__ import annotations

import numpy as np

# A 3x5 pixel font: each glyph is five rows of three bits.
_GLYPHS = {
    "0": "111 101 101 101 111",
    "1": "010 110 010 010 111",
    "2": "111 001 111 100 111",
    "3": "111 001 111 001 111",
    "4": "101 101 111 001 001",
    "5": "111 100 111 001 111",
    "6": "111 100 111 101 111",
    "7": "111 001 001 001 001",
    "8": "111 101 111 101 111",
    "9": "111 101 111 001 111",
    "A": "010 101 111 101 101",
    "B": "110 101 110 101 110",
    "C": "011 100 100 100 011",
    "D": "110 101 101 101 110",
    "E": "111 100 110 100 111",
    "F": "111 100 110 100 100",
    "G": "011 100 101 101 011",
    "H": "101 101 111 101 101",
    "I": "111 010 010 010 111",
    "J": "001 001 001 101 010",
    "K": "101 101 110 101 101",
    "L": "100 100 100 100 111",
    "M": "101 111 111 101 101",
    "N": "110 101 101 101 101",
    "O": "010 101 101 101 010",
    "P": "110 101 110 100 100",
    "Q": "010 101 101 110 011",
    "R": "110 101 110 101 101",
    "S": "011 100 010 001 110",
    "T": "111 010 010 010 010",
    "U": "101 101 101 101 111",
    "V": "101 101 101 101 010",
    "W": "101 101 111 111 101",
    "X": "101 101 010 101 101",
    "Y": "101 101 010 010 010",
    "Z": "111 001 010 100 111",
    " ": "000 000 000 000 000",
    "/": "001 001 010 100 100",
    "-": "000 000 111 000 000",
    ":": "000 010 000 010 000",
    ".": "000 000 000 000 010",
    "=": "000 111 000 111 000",
    "+": "000 010 111 010 000",
    "(": "010 100 100 100 010",
    ")": "010 001 001 001 010",
}
_FONT = {
    char: np.array([[bit == "1" for bit in row] for row in rows.split()], dtype=bool)
    for char, rows in _GLYPHS.items()
}
# Pip positions on a 3x3 grid for faces 1..6.
_PIPS = {
    1: [(1, 1)],
    2: [(0, 0), (2, 2)],
    3: [(0, 0), (1, 1), (2, 2)],
    4: [(0, 0), (0, 2), (2, 0), (2, 2)],
    5: [(0, 0), (0, 2), (1, 1), (2, 0), (2, 2)],
    6: [(0, 0), (0, 2), (1, 0), (1, 2), (2, 0), (2, 2)],
}

BACKGROUND = (24, 96, 48)
INK = (245, 245, 235)
DIE = (250, 250, 245)
DIE_DIM = (150, 150, 140)
PIP = (20, 20, 20)
RED = (200, 40, 40)


def text_width(text: str, scale: int) -> int:
    return len(text) * 4 * scale


def draw_text(canvas: np.ndarray, text: str, x: int, y: int, scale: int, color) -> None:
    """Draw upper-cased `text` with its top-left corner at (x, y), clipped to the canvas."""
    for i, char in enumerate(text.upper()):
        glyph = _FONT.get(char, _FONT[" "])
        block = np.kron(glyph, np.ones((scale, scale), dtype=bool))
        left = x + i * 4 * scale
        h = min(block.shape[0], canvas.shape[0] - y)
        w = min(block.shape[1], canvas.shape[1] - left)
        if h > 0 and w > 0:
            canvas[y : y + h, left : left + w][block[:h, :w]] = color


def draw_die(
    canvas: np.ndarray, face: int, x: int, y: int, size: int, dim: bool = False, pips: bool = True
) -> None:
    """A die seen from above: pips for faces 1..6 (if `pips`), else the number."""
    canvas[y : y + size, x : x + size] = DIE_DIM if dim else DIE
    if pips and face in _PIPS:
        cell, radius = size // 4, max(2, size // 12)
        yy, xx = np.ogrid[:size, :size]
        for row, col in _PIPS[face]:
            cy, cx = cell * (row + 1), cell * (col + 1)
            disc = (yy - cy) ** 2 + (xx - cx) ** 2 <= radius**2
            canvas[y : y + size, x : x + size][disc] = RED if face == 1 else PIP
    else:
        label = str(face)
        scale = max(1, size // (4 * len(label) + 2))
        draw_text(
            canvas,
            label,
            x + (size - text_width(label, scale) + scale) // 2,
            y + (size - 5 * scale) // 2,
            scale,
            PIP,
        )


def render_scene(
    dice: list[tuple[int, bool]], lines: list[str], width: int = 320, pips: bool = True
) -> np.ndarray:
    """A picture with a row of dice, each (face, dimmed), above some lines of text.

    `pips=False` writes every face as a number (for dice with more than six faces).
    """
    size, gap, scale = 48, 12, 2
    height = gap + (size + gap if dice else 0) + len(lines) * 7 * scale + gap
    canvas = np.empty((height, width, 3), dtype=np.uint8)
    canvas[:] = BACKGROUND
    for i, (face, dim) in enumerate(dice):
        draw_die(canvas, face, gap + i * (size + gap), gap, size, dim, pips)
    top = gap + (size + gap if dice else 0)
    for i, line in enumerate(lines):
        draw_text(canvas, line, gap, top + i * 7 * scale, scale, INK)
    return canvas
