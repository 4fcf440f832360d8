import numpy as np
import pytest
from scipy import ndimage

from dice_envs.envs import rendering
from dice_envs.envs.rendering import frame_shape, render_scene

LINES = ["YOU 12  OPPONENT 40", "TURN TOTAL 8  GOAL 100"]
LONG = "A VERY LONG LINE OF TEXT THAT DOES NOT FIT IN THE FRAME AT ALL " * 3


def die_square(frame: np.ndarray, i: int = 0, inset: int = 3) -> np.ndarray:
    """The pixels of the i-th die, a few pixels inside its edge (away from rounded corners)."""
    size, gap = rendering.DIE_SIZE, rendering.GAP
    left = gap + i * (size + gap)
    return frame[gap + inset : gap + size - inset, left + inset : left + size - inset]


def dark_blobs(square: np.ndarray, below: int = 90) -> int:
    """How many connected regions of dark pixels (all channels < `below`) `square` holds."""
    dark = (square.astype(int) < below).all(axis=-1)
    return ndimage.label(dark)[1]


def has_colour(pixels: np.ndarray, colour) -> bool:
    return bool((pixels == np.array(colour, dtype=np.uint8)).all(axis=-1).any())


@pytest.mark.parametrize("max_dice, max_lines", [(5, 3), (1, 2), (6, 3), (0, 1), (2, 0)])
def test_frame_shape_depends_only_on_the_limits(max_dice, max_lines):
    shape = frame_shape(max_dice, max_lines)
    contents = [
        ([], []),
        ([(6, False)] * max_dice, []),
        ([], ["X"] * max_lines),
        ([(f, f % 2 == 0) for f in range(1, max_dice + 1)], ([LONG] + LINES)[:max_lines]),
        ([(123, True)] * max_dice, ["mixed Case gyq"] * max_lines),
    ]
    for dice, lines in contents:
        for pips in (True, False):
            frame = render_scene(dice, lines, max_dice=max_dice, max_lines=max_lines, pips=pips)
            assert frame.shape == shape
            assert frame.dtype == np.uint8


def test_frame_shape_grows_with_the_limits_and_suits_video():
    assert frame_shape(5, 3)[2] == 3
    assert frame_shape(5, 3)[0] > frame_shape(5, 2)[0] > frame_shape(0, 2)[0]
    assert frame_shape(12, 3)[1] > frame_shape(5, 3)[1]
    assert frame_shape(5, 3)[1] >= 320
    for max_dice, max_lines in [(0, 0), (1, 2), (5, 3), (6, 3), (7, 5)]:
        height, width, _ = frame_shape(max_dice, max_lines)
        assert height % 2 == 0 and width % 2 == 0  # video encoders (yuv420p) need even sizes
    # the default limits are the signature's defaults
    assert render_scene([], []).shape == frame_shape(5, 3) == frame_shape()


def test_face_one_has_one_red_pip():
    frame = render_scene([(1, False), (1, True), (4, False)], LINES)
    for i in (0, 1):
        square = die_square(frame, i)
        assert has_colour(square, rendering.RED)
        red = (square == np.array(rendering.RED, dtype=np.uint8)).all(axis=-1)
        assert ndimage.label(red)[1] == 1
        assert dark_blobs(square) == 0
    assert not has_colour(die_square(frame, 2), rendering.RED)


@pytest.mark.parametrize("dim", [False, True])
@pytest.mark.parametrize("face", [2, 3, 4, 5, 6])
def test_pips_count_the_face(face, dim):
    frame = render_scene([(face, dim)], [])
    assert dark_blobs(die_square(frame)) == face


def test_face_six_has_six_dark_pips_in_any_slot():
    frame = render_scene([(3, False), (6, True), (2, False), (5, False), (6, False)], LINES)
    assert [dark_blobs(die_square(frame, i)) for i in range(5)] == [3, 6, 2, 5, 6]


def test_dimmed_die_is_greyer():
    frame = render_scene([(2, False), (2, True)], [])
    bright, dim = die_square(frame, 0), die_square(frame, 1)
    assert has_colour(bright, rendering.DIE) and not has_colour(bright, rendering.DIE_DIM)
    assert has_colour(dim, rendering.DIE_DIM) and not has_colour(dim, rendering.DIE)
    assert dim.mean() < bright.mean()


@pytest.mark.parametrize("face", [3, 7, 20, 100])
def test_without_pips_the_number_is_written(face):
    frame = render_scene([(face, False)], ["ROUNDS LEFT 9"], max_dice=1, max_lines=2, pips=False)
    square = die_square(frame)
    assert len(np.unique(square.reshape(-1, 3), axis=0)) > 2  # not a uniform (or two-tone) square
    assert has_colour(square, rendering.DIE)
    assert not has_colour(square, rendering.RED)
    # Digits are solid strokes: one dark region per digit (counting the anti-aliased edges, which
    # are lighter than pips but darker than the bright die), never a grid of pips.
    assert dark_blobs(square, below=160) == len(str(face))


def test_without_pips_different_numbers_differ():
    def square(face):
        return die_square(render_scene([(face, False)], [], max_dice=1, max_lines=0, pips=False))

    assert not np.array_equal(square(7), square(12))
    assert not np.array_equal(square(3), square(8))


def test_too_many_dice_or_lines():
    with pytest.raises(ValueError, match="max_dice"):
        render_scene([(1, False)] * 6, [])
    with pytest.raises(ValueError, match="max_dice"):
        render_scene([(1, False)], [], max_dice=0)
    with pytest.raises(ValueError, match="max_lines"):
        render_scene([], ["A", "B", "C", "D"])
    with pytest.raises(ValueError, match="max_lines"):
        render_scene([], ["A", "B"], max_dice=2, max_lines=1)
    with pytest.raises(ValueError, match="max_dice"):
        frame_shape(-1, 3)
    with pytest.raises(ValueError, match="max_lines"):
        frame_shape(5, -2)
    with pytest.raises(TypeError):
        render_scene([], [], 5, 3)  # the limits are keyword-only


def test_canvas_is_not_blank_and_text_is_drawn():
    frame = render_scene([(3, False), (5, True)], LINES)
    background = (frame == np.array(rendering.BACKGROUND, dtype=np.uint8)).all(axis=-1)
    assert background.mean() > 0.5  # mostly background ...
    assert (~background).sum() > 2 * rendering.DIE_SIZE**2  # ... but with two dice and text
    text_top = 2 * rendering.GAP + rendering.DIE_SIZE
    text = frame[text_top:]
    ink = (text.astype(int) > 200).all(axis=-1)  # light text on the dark green background
    assert ink.sum() > 300
    for i in range(len(LINES)):  # every line has ink in its own band
        band = ink[i * rendering.LINE_HEIGHT : (i + 1) * rendering.LINE_HEIGHT]
        assert band.sum() > 100
    # text starts at the left margin and is not clipped at the right edge
    columns = np.flatnonzero(ink.any(axis=0))
    assert rendering.GAP <= columns[0] < rendering.GAP + 4
    assert columns[-1] < frame.shape[1] - rendering.GAP
    # the text itself matters: other lines give other pixels
    assert not np.array_equal(frame, render_scene([(3, False), (5, True)], ["YOU 13", "X"]))


def test_long_lines_are_shrunk_to_fit():
    frame = render_scene([], ["TURN SCORE 20 CHIPS (1000 PTS) AND SOME MORE WORDS HERE"])
    ink = (frame.astype(int) > 200).all(axis=-1)
    columns = np.flatnonzero(ink.any(axis=0))
    assert columns.size and columns[-1] < frame.shape[1] - rendering.GAP // 2


def test_frames_are_fresh_writable_arrays():
    a = render_scene([(2, False)], LINES)
    b = render_scene([(2, False)], LINES)
    assert np.array_equal(a, b)
    a[:] = 0  # writing to one frame changes neither the next frame nor cached dice
    assert np.array_equal(render_scene([(2, False)], LINES), b)


def test_missing_pillow_is_explained(monkeypatch):
    monkeypatch.setattr(rendering, "Image", None)
    assert frame_shape(1, 2) == (144, 352, 3)  # sizes need no Pillow
    with pytest.raises(ImportError, match="Pillow"):
        render_scene([(1, False)], ["X"])
