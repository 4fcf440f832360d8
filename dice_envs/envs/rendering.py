"""Small RGB pictures of a row of dice above a few lines of text, drawn with Pillow.

The frame size depends only on `max_dice` and `max_lines` (see `frame_shape`), never on what is
drawn, so an environment that passes the same limits on every call gets frames of one size for
the whole episode, as video recorders (Gymnasium's `RecordVideo`) need.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from gymnasium.error import DependencyNotInstalled

try:
    from PIL import Image, ImageDraw, ImageFont
except ImportError:  # only rgb_array rendering needs Pillow; the games and text renders do not
    Image = ImageDraw = ImageFont = None

BACKGROUND = (24, 96, 48)
INK = (245, 245, 235)
DIE = (250, 250, 245)
DIE_DIM = (150, 150, 140)
PIP = (20, 20, 20)
RED = (200, 40, 40)

DIE_SIZE = 48  # side of a die, in pixels
GAP = 12  # margin around the picture and space between dice
TEXT_SIZE = 18  # font size of the text lines
MIN_TEXT_SIZE = 10  # a line too wide for the frame is shrunk down to this size, then clipped
LINE_HEIGHT = 24  # distance between the tops of two text lines
MIN_WIDTH = 352  # room for about 35 characters of TEXT_SIZE text
BLOCK = 16  # width and height are multiples of this (video encoders want even sizes)

# Pip centres on a 3x3 grid (row, column) for faces 1..6.
_PIPS = {
    1: [(1, 1)],
    2: [(0, 0), (2, 2)],
    3: [(0, 0), (1, 1), (2, 2)],
    4: [(0, 0), (0, 2), (2, 0), (2, 2)],
    5: [(0, 0), (0, 2), (1, 1), (2, 0), (2, 2)],
    6: [(0, 0), (0, 2), (1, 0), (1, 2), (2, 0), (2, 2)],
}


@functools.cache
def _font(size: int) -> ImageFont.FreeTypeFont:
    """Pillow's built-in scalable font (Aileron Regular) at `size`, built once per size."""
    return ImageFont.load_default(size=size)


def _round_up(n: int) -> int:
    return -(-n // BLOCK) * BLOCK


def _check_limit(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")


def frame_shape(max_dice: int = 5, max_lines: int = 3) -> tuple[int, int, int]:
    """The (height, width, 3) of every frame `render_scene` draws with these limits."""
    _check_limit("max_dice", max_dice)
    _check_limit("max_lines", max_lines)
    dice_row = DIE_SIZE + GAP if max_dice else 0
    height = GAP + dice_row + max_lines * LINE_HEIGHT + GAP
    width = max(MIN_WIDTH, GAP + max_dice * (DIE_SIZE + GAP))
    return _round_up(height), _round_up(width), 3


@functools.lru_cache(maxsize=512)
def _die_image(face: int, dim: bool, pips: bool) -> Image.Image:
    """A die seen from above, on the background colour: pips for faces 1..6, else the number."""
    size = DIE_SIZE
    image = Image.new("RGB", (size, size), BACKGROUND)
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle(
        (0, 0, size - 1, size - 1), radius=size // 8, fill=DIE_DIM if dim else DIE
    )
    if pips and face in _PIPS:
        radius = size / 10
        for row, col in _PIPS[face]:
            cy, cx = size * (row + 1) / 4, size * (col + 1) / 4
            box = (cx - radius, cy - radius, cx + radius, cy + radius)
            draw.ellipse(box, fill=RED if face == 1 else PIP)
    else:
        label = str(face)
        font_size = int(size * 0.6)
        while font_size > MIN_TEXT_SIZE and _font(font_size).getlength(label) > size - 8:
            font_size -= 2
        draw.text((size / 2, size / 2), label, fill=PIP, font=_font(font_size), anchor="mm")
    return image


def _fitting_font(line: str, room: int) -> ImageFont.FreeTypeFont:
    """The TEXT_SIZE font, or a smaller one (not below MIN_TEXT_SIZE) if `line` is too wide."""
    font = _font(TEXT_SIZE)
    length = font.getlength(line)
    if length <= room:
        return font
    return _font(max(MIN_TEXT_SIZE, int(TEXT_SIZE * room / length)))


def render_scene(
    dice: list[tuple[int, bool]],
    lines: list[str],
    *,
    max_dice: int = 5,
    max_lines: int = 3,
    pips: bool = True,
) -> np.ndarray:
    """An RGB picture (uint8, shape `frame_shape(max_dice, max_lines)`) of a row of dice, each
    `(face, dimmed)`, above some lines of text.

    `pips=False` writes every face as a number (for dice with more than six faces). Text lines too
    wide for the frame are drawn smaller. Raises ValueError if there are more than `max_dice` dice
    or more than `max_lines` lines.
    """
    height, width, _ = frame_shape(max_dice, max_lines)
    if Image is None:
        raise ImportError("render_scene needs Pillow >= 10.1: pip install pillow")
    if len(dice) > max_dice:
        raise ValueError(f"dice: got {len(dice)} dice, more than max_dice={max_dice}")
    if len(lines) > max_lines:
        raise ValueError(f"lines: got {len(lines)} lines, more than max_lines={max_lines}")
    image = Image.new("RGB", (width, height), BACKGROUND)
    for i, (face, dim) in enumerate(dice):
        image.paste(_die_image(face, bool(dim), pips), (GAP + i * (DIE_SIZE + GAP), GAP))
    draw = ImageDraw.Draw(image)
    top = GAP + (DIE_SIZE + GAP if max_dice else 0)
    room = width - 2 * GAP
    for i, line in enumerate(lines):
        font = _fitting_font(line, room)
        draw.text((GAP, top + i * LINE_HEIGHT), line, fill=INK, font=font, anchor="la")
    return np.array(image)  # a writable copy


class HumanWindow:
    """A pygame window that shows each frame it is given (what `render_mode="human"` draws on
    every reset and step, as Gymnasium's toy-text envs do). pygame is optional: without it the
    env is refused when it is made, with the extra to install."""

    def __init__(self) -> None:
        try:
            import pygame
        except ImportError:
            raise DependencyNotInstalled(
                "render_mode='human' draws in a pygame window; install it with "
                "pip install 'dice-envs[human]' (or use render_mode='rgb_array' or 'ansi')"
            ) from None
        self.pygame = pygame
        self.screen: Any = None
        self.clock: Any = None

    def show(self, frame: np.ndarray, fps: float) -> None:
        """Draw `frame`, then wait out the rest of its 1 / `fps` seconds (0: no wait)."""
        pygame = self.pygame
        if self.screen is None:
            pygame.init()
            pygame.display.set_caption("dice-envs")
            self.screen = pygame.display.set_mode((frame.shape[1], frame.shape[0]))
            self.clock = pygame.time.Clock()
        pygame.event.pump()  # keeps the window responsive to the desktop
        self.screen.blit(pygame.surfarray.make_surface(frame.swapaxes(0, 1)), (0, 0))
        pygame.display.flip()
        self.clock.tick(fps)

    def close(self) -> None:
        if self.screen is not None:
            self.pygame.display.quit()
            self.pygame.quit()
            self.screen = None
