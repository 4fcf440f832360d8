"""The Chow–Robbins coin game with a horizon: exact backward passes, plain and banded.

Toss a fair coin at most N times (N, the horizon, as in `dice_envs/ChowRobbins-v0`); after
any toss stop and be paid heads / tosses; the N-th toss ends the game paying heads / N.
Source: H. Tijms, "Stochastic games and dynamic programming", Asia Pacific Mathematics
Newsletter (2012), after Y. S. Chow and H. Robbins, "On optimal stopping rules for S_n/n",
Illinois Journal of Mathematics 9 (1965): the recursion

    f_k(i) = max[i / (N - k), (f_{k-1}(i + 1) + f_{k-1}(i)) / 2],   f_0(i) = i / N,

the published f_N(0) (0.7679, 0.7780, 0.7839, 0.7912, 0.79206, 0.79263, 0.79289, 0.79294 for
N = 25, 50, 100, 1,000, 2,500, 10,000, 100,000, 1,000,000), the thresholds beta_n of the
unbounded game (stop after n tosses when heads - tails >= beta_n) and the value pi / 4 of the
rule "stop as soon as heads exceed tails".

Here V_n(i) = f_{N-n}(i) is the value after n tosses with i heads, d = 2i - n = heads - tails.

- `full_backward(N)`: the plain pass over every (n, i), O(N^2) time, O(N) memory; the
  reference.
- `banded_backward(N, eps)`: the same pass restricted to |d| <= D (see its docstring for the
  error bound): O(N * D) time, O(D) memory, D ~ sqrt(2 N ln(4 / eps)); `make bench` times
  it against the full pass.
- `evaluate_threshold_rule(N, thresholds)`, `heads_exceed_tails(N)`: the exact value of a
  threshold rule under the same band and bound.
- `solve_chow_robbins(model)`: what `baselines.solve("dice_envs/ChowRobbins-v0", ...)` returns,
  a `ChowRobbinsSolution`: the value, the threshold policy, Q-values of any position, and the
  full arrays of a `Solution` built only when read.

Ties: stopping is taken whenever it is within `TIE` of continuing (see `banded_backward`).
"""

from __future__ import annotations

import bisect
import math
import time
from dataclasses import dataclass, field

import numpy as np

from baselines.solvers import Solution, optimal_action_mask
from dice_envs.tables import observation_key

STOP, TOSS = 0, 1
EPS = 1e-14
# Stop when stopping is worth at least (continuing - TIE): the lowest-numbered action (stop)
# on ties, as `baselines.solvers.greedy` does, with a margin for round-off; ending the game on
# a tie never stalls it. (N - 1, d = 0) is an exact tie for odd N: stop pays 1/2, one more
# toss (2i + 1) / (2N) = 1/2, and the two floats differ by an ulp either way (for 108 odd
# N <= 3000 the toss comes out an ulp above); 1e-15 covers a few ulps of values <= 1. Genuine
# margins below about 1e-13 occur at large n (one layer of N = 10^5, n = 99,863); they are
# within round-off, and such thresholds are not certified either way.
TIE = 1e-15
# The lazily built arrays of a `ChowRobbinsSolution` are refused beyond this many states
# (about 34 bytes each): the tables that would need them can not be built at that size either.
MATERIALISE_LIMIT = 20_000_000
_RESCALE_AT = 2.0**500  # values are kept times a power of two c; rescaled (exactly) from here
_RESCALE = 2.0**-500
_CHECKPOINTS = 256  # layers of values kept by a solve, to answer Q-values of any position
# A solve keeps the band of eps * QUERY_MARGIN (about 10% wider than eps's at N = 10^6), so that
# the Q-values of the positions play reaches come from its checkpoints within eps.
QUERY_MARGIN = 1e-3


def band_width(horizon: int, eps: float = EPS) -> int:
    """The least D >= 0 with 4 exp(-(D + 1)^2 / (2 N)) <= eps, capped at N (then the band holds
    every position and the pass is the full one).

    A simple random walk S_0 = 0 reaches D + 1 within N steps with probability
    P(max S_k >= D + 1) <= 2 P(S_N >= D + 1) (reflection) <= 2 exp(-(D + 1)^2 / (2 N))
    (Hoeffding); either side: twice that.
    """
    horizon = int(horizon)
    if horizon < 1:
        raise ValueError(f"horizon must be an integer >= 1, got {horizon}")
    if not 0 < eps < 1:
        raise ValueError(f"eps must be in (0, 1), got {eps}")
    width = max(0, math.ceil(math.sqrt(2 * horizon * math.log(4 / eps))) - 1)
    while width > 0 and 4 * math.exp(-(width**2) / (2 * horizon)) <= eps:
        width -= 1  # round-off in the square root
    while 4 * math.exp(-((width + 1) ** 2) / (2 * horizon)) > eps:
        width += 1
    return min(width, horizon)


def exit_probability_bound(band: int, d: int, steps: int) -> float:
    """An upper bound on the chance that a walk from d leaves [-band, band] within `steps`."""
    if steps <= 0:
        return 0.0 if abs(d) <= band else 1.0
    up, down = band + 1 - d, band + 1 + d
    if up <= 0 or down <= 0:
        return 1.0
    return min(1.0, 2 * math.exp(-(up**2) / (2 * steps)) + 2 * math.exp(-(down**2) / (2 * steps)))


def _threshold(
    cont: np.ndarray, stop: np.ndarray, limit: float, good: np.ndarray
) -> tuple[int, bool]:
    """(k, regular) for one layer's window: k, the first index of the top run of positions
    where stop >= cont - limit (the window's length if there is none); regular, whether the
    positions where stop >= cont (in floats) form an upper set of the window, as the theory
    says they do (V_n is convex in i, so stop - cont is concave, and stop wins at i = n).
    `good`: a bool buffer as long as the window."""
    m = len(cont)
    np.greater_equal(stop, cont, out=good)
    count = int(np.count_nonzero(good))
    k = m - count
    if count and int(good.argmax()) != k:  # not an upper set: find the top run the long way
        np.less_equal(cont - stop, limit, out=good)
        rev = good[::-1]
        run = int(rev.argmin())
        return (0 if rev[run] else m - run), False
    while k > 0 and cont[k - 1] - stop[k - 1] <= limit:  # near-ties just below: stop
        k -= 1
    return k, True


def _full_layers(horizon: int):
    """(n, stop, cont) for n = N - 1 down to 0 over every i = 0..n: stop = i / n (0 at n = 0,
    where it is illegal), cont = the value of one more toss. The same float operations as the
    banded pass, so the two agree to the last bit where the band holds every position."""
    values = np.arange(horizon + 1, dtype=float) * (1.0 / horizon)
    heads = np.arange(horizon + 1, dtype=float)
    for n in range(horizon - 1, -1, -1):
        cont = (values[: n + 1] + values[1 : n + 2]) * 0.5
        stop = heads[: n + 1] * (1.0 / n) if n else np.zeros(1)
        values = np.maximum(stop, cont) if n else cont
        yield n, stop, cont


def full_backward(horizon: int, tie: float = TIE) -> tuple[float, np.ndarray]:
    """f_N(0) and the thresholds by the plain backward pass over every (n, i).

    One numpy step per n over i = 0..n: O(N^2) time, O(N) memory; the reference for
    `banded_backward`. Thresholds as there: `thresholds[n]` for n = 0..N (index 0: 1, never
    stop; index N: -N, the game pays).
    """
    horizon = int(horizon)
    if horizon < 1:
        raise ValueError(f"horizon must be an integer >= 1, got {horizon}")
    thresholds = np.empty(horizon + 1, dtype=np.int64)
    thresholds[0], thresholds[horizon] = 1, -horizon
    value = 0.0
    for n, stop, cont in _full_layers(horizon):
        if n == 0:
            value = float(cont[0])
        else:
            k, _regular = _threshold(cont, stop, tie, np.empty(n + 1, dtype=bool))
            thresholds[n] = 2 * k - n
    return value, thresholds


@dataclass(frozen=True)
class Banded:
    """The result of a banded pass.

    value: V_0(0) = f_N(0) (or the rule's value), within `eps` of the exact one.
    thresholds: int array, thresholds[n] for n = 0..N: stop after n tosses iff heads - tails
        >= thresholds[n] (index 0: 1, never stop; index N: -N, the game pays at the horizon).
    seconds: wall time. band: D, the half-width kept. eps: the error bound.
    irregular: layers whose stop set was not an upper set of the window (0 is expected).
    """

    value: float
    thresholds: np.ndarray = field(repr=False)
    seconds: float
    band: int
    eps: float
    horizon: int
    irregular: int = 0


def _window(n: int, band: int, center: int) -> tuple[int, int]:
    """The head counts i kept after n tosses: |2i - n - center| <= band, 0 <= i <= n."""
    return max(0, (n + center - band + 1) // 2), min(n, (n + center + band) // 2)


def _sweep(
    horizon: int,
    band: int,
    *,
    center: int = 0,
    top: tuple[int, int, np.ndarray] | None = None,
    bottom: int = 1,
    thresholds: np.ndarray | None = None,
    tie: float = TIE,
    rule: np.ndarray | None = None,
    checkpoints: dict[int, tuple[int, np.ndarray]] | None = None,
    every: int = 0,
) -> tuple[int, np.ndarray, int]:
    """Backward over layers from `top` (layer, first head count, values; None: the horizon's
    payoffs) down to layer `bottom` >= 1 over the band |d - center| <= band.

    Each layer is kept over its window plus one cut-off slot on each side, whose value is the
    stop value (a forced stop). Values are stored times a power of two c (doubling each layer,
    so one toss's average is a plain sum; rescaled by 2^-500 now and then): exact, the same
    bits as the unscaled pass. With `thresholds` the optimal decisions are recorded (tie rule
    `tie`); with `rule` (a threshold per layer) that rule is evaluated instead of the max.
    Returns (first head count, unscaled values of layer `bottom` over window and slots,
    irregular layers).
    """
    scale = 1.0
    margin = max(band, 64)  # room to slide the window down before moving the data
    size = band + margin + 4
    first_n = horizon if top is None else top[0]
    lo, hi = _window(first_n, band, center)
    base = max(0, lo - 1 - margin)
    heads = np.arange(base, base + size, dtype=float)
    prev, cur = np.zeros(size), np.zeros(size)
    s_buf, t_buf = np.empty(size), np.empty(size)
    good_buf = np.empty(size, dtype=bool)
    if top is None:
        a, b = max(lo - 1, 0) - base, hi + 2 - base
        prev[a:b] = heads[a:b] * (1.0 / horizon)
    else:
        _, first, values = top
        prev[first - base : first - base + len(values)] = values
    irregular = 0
    for n in range(first_n - 1, bottom - 1, -1):
        lo, hi = _window(n, band, center)
        a = lo - base
        if a < 1 and base > 0:  # slide: the window needs a slot at lo - 1
            new_base = max(0, lo - 1 - margin)
            shift = base - new_base
            prev[shift:] = prev[: size - shift].copy()
            base = new_base
            heads = np.arange(base, base + size, dtype=float)
            a = lo - base
        m = hi - lo + 1
        scale *= 2.0
        step = scale / n
        s, t = s_buf[:m], t_buf[:m]
        np.add(prev[a : a + m], prev[a + 1 : a + m + 1], out=s)  # scale * cont
        if rule is None:
            np.multiply(heads[a : a + m], step, out=t)  # scale * stop
            if thresholds is not None:
                k, regular = _threshold(s, t, scale * tie, good_buf[:m])
                irregular += not regular
                thresholds[n] = 2 * (lo + k) - n
            np.maximum(s, t, out=cur[a : a + m])
        else:
            k = min(max(-((-(n + int(rule[n]))) // 2) - lo, 0), m)  # first i with d >= rule
            cur[a : a + k] = s[:k]
            np.multiply(heads[a + k : a + m], step, out=cur[a + k : a + m])
        if a >= 1:
            cur[a - 1] = heads[a - 1] * step
        cur[a + m] = heads[a + m] * step
        if scale > _RESCALE_AT:
            cur[max(a - 1, 0) : a + m + 1] *= _RESCALE
            scale *= _RESCALE
        if every and n % every == 0 and checkpoints is not None:
            first = max(lo - 1, 0)
            checkpoints[n] = (first, cur[first - base : a + m + 1] / scale)
        prev, cur = cur, prev
    lo, hi = _window(bottom, band, center)
    first = max(lo - 1, 0)
    return first, prev[first - base : hi + 2 - base] / scale, irregular


def banded_backward(horizon: int, eps: float = EPS, tie: float = TIE) -> Banded:
    """f_N(0) and the thresholds beta_n, n = 1..N-1, exact to `eps`, in O(N * D) time.

    The band. After n tosses only head counts with |d| <= D are kept (d = heads - tails),
    D = `band_width(N, eps)`, the least D with 4 exp(-(D + 1)^2 / (2N)) <= eps. A toss that
    leaves the band (|d| = D + 1) ends the game there with the stop value i / n (a forced
    stop). Proof of the bound: call this the banded game. Its policies are those of the real
    game that stop on leaving the band, so its value is at most the real one. Conversely,
    follow the real game's optimal policy in the banded game: the two payoffs differ only on
    the paths on which the walk leaves the band before the policy stops, and there by at most
    the payoff range 1 (every payoff lies in [0, 1]); the policy stopping earlier only lowers
    the chance to leave. That chance is at most the chance that a simple random walk leaves
    [-D, D] within N steps, below 2 * 2 exp(-(D + 1)^2 / (2N)) <= eps (reflection principle
    and Hoeffding, for each side). So value - eps <= banded value <= value, up to float
    round-off. (Any cut-off values in [0, 1] would do; the forced stop makes the banded value
    a lower bound.) A decision at (n, d) is the real one wherever its margin exceeds the
    chance of leaving the band from there (`exit_probability_bound`), which is about eps or
    less for the thresholds (|d| ~ 0.84 sqrt(n) << D).

    The pass. One numpy step per n over the window of at most D + 1 head counts, in
    preallocated buffers (values times a power of two, so a toss is a plain sum): a sum, a
    product, the max, and the threshold's comparison and counts. Memory O(D), time O(N * D)
    (`make bench` measures it). Float round-off adds at most about N ulps.

    Thresholds: `thresholds[n]` is the least d (of n's parity) such that stopping is within
    `tie` of continuing at d and at every d' >= d in the band (stop on near-ties; stopping
    sooner never stalls the game). Above the band the banded game stops (forced); below it
    continuing is optimal (for d < 0 one more toss then a stop already beats stopping).
    `irregular` counts layers where the stop set is not an upper set (none are expected: it
    is, by convexity of V_n in i); their threshold is the lower end of the top run.
    """
    start = time.perf_counter()
    horizon = int(horizon)
    band = band_width(horizon, eps)
    thresholds = np.empty(horizon + 1, dtype=np.int64)
    thresholds[0], thresholds[horizon] = 1, -horizon
    value, irregular = _value_from_layer_one(horizon, band, dict(thresholds=thresholds, tie=tie))
    return Banded(
        value=value,
        thresholds=thresholds,
        seconds=time.perf_counter() - start,
        band=band,
        eps=eps,
        horizon=horizon,
        irregular=irregular,
    )


def _value_from_layer_one(horizon: int, band: int, options: dict) -> tuple[float, int]:
    """V_0(0) = (V_1(0) + V_1(1)) / 2 after a pass down to layer 1."""
    first, values, irregular = _sweep(horizon, band, bottom=1, **options)
    return float((values[0 - first] + values[1 - first]) * 0.5), irregular


def evaluate_threshold_rule(horizon: int, thresholds, eps: float = EPS) -> Banded:
    """The exact value (to `eps`) of "stop after n tosses iff heads - tails >= thresholds[n]".

    `thresholds`: an int (the same for every n) or an array indexed by n = 0..N (entries 0 and
    N are not used: the first toss is forced, the horizon pays). The banded pass of
    `banded_backward` with the rule in place of the max (one sum and one product over the
    two parts of the window per n); the same proof gives |value - banded value| <= eps, the
    rule's paths leaving the band with probability below eps.
    """
    start = time.perf_counter()
    horizon = int(horizon)
    band = band_width(horizon, eps)
    if np.ndim(thresholds) == 0:
        rule = np.full(horizon + 1, int(thresholds), dtype=np.int64)
    else:
        rule = np.asarray(thresholds, dtype=np.int64)
        if rule.shape != (horizon + 1,):
            raise ValueError(f"thresholds must be an int or have N + 1 = {horizon + 1} entries")
    value, _ = _value_from_layer_one(horizon, band, dict(rule=rule))
    return Banded(
        value=value,
        thresholds=rule,
        seconds=time.perf_counter() - start,
        band=band,
        eps=eps,
        horizon=horizon,
    )


def heads_exceed_tails(horizon: int, eps: float = EPS) -> Banded:
    """The rule "stop as soon as heads exceed tails" (d >= 1) with a horizon of N tosses.

    Its value in the unbounded game is pi / 4 (Tijms, 2012). With the horizon, let tau
    be the first time d = 1; the unbounded game pays 1/2 + 1/(2 tau), the horizon pays
    1/2 + S_N / (2N) when tau > N, and E[S_N; tau > N] = -P(tau <= N) (optional stopping), so
    pi/4 - 1/(2N) <= value <= pi/4 - P(tau <= N) / (2N), P(tau > N) = C(N, floor(N/2)) / 2^N.
    """
    return evaluate_threshold_rule(horizon, 1, eps)


def heads_exceed_tails_bounds(horizon: int) -> tuple[float, float]:
    """(lower, upper) bounds on `heads_exceed_tails(N).value` from its docstring (exact)."""
    n = int(horizon)
    half = n // 2
    log_never = math.lgamma(n + 1) - math.lgamma(half + 1) - math.lgamma(n - half + 1)
    never = math.exp(log_never - n * math.log(2))  # P(tau > N) = P(S_N in {0, -1})
    return math.pi / 4 - 1 / (2 * n), math.pi / 4 - (1 - never) / (2 * n)


class TriangleIndex:
    """(tosses, heads) -> row n(n+1)/2 + i of arrays over 0 <= i <= n <= N - 1; KeyError (or -1
    in a batch) for anything else. A class so that solutions pickle."""

    def __init__(self, horizon: int) -> None:
        self.horizon = int(horizon)

    def key(self, obs) -> tuple[int, int]:
        key = observation_key(obs)
        if isinstance(key, int) or len(key) != 2:
            raise KeyError(obs)
        n, i = key
        if not (0 <= i <= n < self.horizon):
            raise KeyError(obs)
        return n, i

    def __call__(self, obs) -> int:
        n, i = self.key(obs)
        return n * (n + 1) // 2 + i

    def batch(self, observations: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations, dtype=np.int64).reshape(len(observations), -1)
        if obs.shape[1] != 2:
            return np.full(len(obs), -1, dtype=np.int64)
        n, i = obs[:, 0], obs[:, 1]
        inside = (i >= 0) & (i <= n) & (n < self.horizon)
        return np.where(inside, n * (n + 1) // 2 + i, -1)


class _Materialised:
    """A `Solution` array of a `ChowRobbinsSolution`, built (with the others) on first read."""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, solution, owner=None):
        if solution is None:
            return self
        return solution.arrays()[self.name]

    def __set__(self, solution, value) -> None:
        if value is not None:
            raise AttributeError(f"{self.name} is computed from the solution")


class ChowRobbinsSolution(Solution):
    """`baselines.solve` for the Chow–Robbins game, in O(N + D * 256) memory.

    Holds the value and the thresholds of `banded_backward` (run with the band of
    eps * QUERY_MARGIN, so the value is within eps / 1000), and 256 layers of values
    (checkpoints) kept by that pass. The same public surface as a `Solution`:

    - `action(obs)` / `__call__`: the threshold rule, stop (0) iff tosses >= 1 and
      heads - tails >= thresholds[tosses] (stop on ties within `TIE`), O(1).
    - `q_values(obs)`, `state_value(obs)`, `optimal_actions(obs)`: Q(stop) = heads / tosses
      (0 at tosses 0, as the model pays an illegal stop), Q(toss) the value of one more toss,
      within `eps` for every position: from the nearest checkpoint (at most N / 256 layers
      recomputed) when the band holds the position's future to `eps`, else by a band centred
      on the position (O((N - n) * D) time; such positions are reached with probability
      below eps).
    - `state_values`, `q`, `policy`, `legal`: arrays over all N(N+1)/2 positions (rows of
      `index_of`, a `TriangleIndex`), built by the full pass when first read, as the residual
      measurement and `baselines.on_states`/`evaluate` (which need the tables anyway) do;
      refused beyond `MATERIALISE_LIMIT` positions. `policy` is the threshold rule.

    Attributes beyond `Solution`'s: horizon, thresholds, band, eps, banded (the `Banded`).
    """

    state_values = _Materialised()
    q = _Materialised()
    policy = _Materialised()
    legal = _Materialised()

    def __init__(self, horizon: int, eps: float = EPS, tie: float = TIE) -> None:
        start = time.perf_counter()
        self.horizon, self.eps, self.tie = int(horizon), eps, tie
        self.band = band_width(self.horizon, eps * QUERY_MARGIN)
        self._arrays: dict[str, np.ndarray] | None = None
        self._last_layer: tuple[int, int, np.ndarray] | None = None
        thresholds = np.empty(self.horizon + 1, dtype=np.int64)
        thresholds[0], thresholds[self.horizon] = 1, -self.horizon
        checkpoints: dict[int, tuple[int, np.ndarray]] = {}
        every = max(1, -(-self.horizon // _CHECKPOINTS))
        options = dict(thresholds=thresholds, tie=tie, checkpoints=checkpoints, every=every)
        value, irregular = _value_from_layer_one(self.horizon, self.band, options)
        self._checkpoints = checkpoints
        self._checkpoint_layers = sorted(checkpoints)
        self.thresholds = thresholds
        index = TriangleIndex(self.horizon)
        seconds = time.perf_counter() - start
        self.banded = Banded(value, thresholds, seconds, self.band, eps, self.horizon, irregular)
        super().__init__(
            value=value,
            state_values=None,
            q=None,
            policy=None,
            legal=None,
            index_of=index,
            method="specialised",
            seconds=seconds,
            _residual=float("nan"),  # measured on the tables when first read
            batch_index=index.batch,
        )

    def __repr__(self) -> str:
        return f"ChowRobbins{super().__repr__()[:-1]}, horizon={self.horizon}, band={self.band})"

    # The decisions and values of single positions, without the arrays.

    def action(self, obs) -> int:
        """The threshold rule's action: 0 stop, 1 toss (stop on ties within TIE)."""
        n, i = self.index_of.key(obs)
        return STOP if n and 2 * i - n >= self.thresholds[n] else TOSS

    def q_values(self, obs) -> np.ndarray:
        """[Q(stop), Q(toss)] of (tosses, heads), within eps."""
        n, i = self.index_of.key(obs)
        if self._arrays is not None:
            return self._arrays["q"][n * (n + 1) // 2 + i].copy()
        stop = i / n if n else 0.0
        return np.array([stop, self._toss_value(n, i)])

    def state_value(self, obs) -> float:
        n, _ = self.index_of.key(obs)
        q = self.q_values(obs)
        return float(max(q) if n else q[TOSS])

    def optimal_actions(self, obs) -> list[int]:
        """Every legal action within TIE_TOLERANCE of the best, as for any `Solution`."""
        n, _ = self.index_of.key(obs)
        legal = np.array([n > 0, True])
        return np.flatnonzero(optimal_action_mask(self.q_values(obs), legal)).tolist()

    def _toss_value(self, n: int, i: int) -> float:
        """(V_{n+1}(i) + V_{n+1}(i + 1)) / 2."""
        horizon, layer = self.horizon, n + 1
        if layer == horizon:
            return (2 * i + 1) / (2 * horizon)
        d = 2 * i - n
        if exit_probability_bound(self.band, d, horizon - n) <= self.eps:
            first, values = self._layer(layer)
        else:  # a band centred on the position, as wide as its own future needs
            band = band_width(horizon - n, self.eps)
            first, values, _ = _sweep(horizon, band, center=d, bottom=layer)
        return float((values[i - first] + values[i + 1 - first]) * 0.5)

    def _layer(self, layer: int) -> tuple[int, np.ndarray]:
        """Layer values over the band (and its slots), from the nearest checkpoint above."""
        if self._last_layer is not None and self._last_layer[0] == layer:
            return self._last_layer[1:]
        at = bisect.bisect_left(self._checkpoint_layers, layer)
        if at < len(self._checkpoint_layers):
            source = self._checkpoint_layers[at]
            first, values = self._checkpoints[source]
            if source != layer:
                first, values, _ = _sweep(
                    self.horizon, self.band, top=(source, first, values), bottom=layer
                )
        else:
            first, values, _ = _sweep(self.horizon, self.band, bottom=layer)
        self._last_layer = (layer, first, values)
        return first, values

    # The full arrays, on first read.

    def arrays(self) -> dict[str, np.ndarray]:
        """state_values, q, policy and legal over every position (built once, O(N^2))."""
        if self._arrays is None:
            states = self.horizon * (self.horizon + 1) // 2
            if states > MATERIALISE_LIMIT:
                raise ValueError(
                    f"arrays over all {states:,} positions of horizon {self.horizon} exceed "
                    f"MATERIALISE_LIMIT={MATERIALISE_LIMIT:,}; use action() and q_values()"
                )
            q = np.empty((states, 2))
            for n, stop, cont in _full_layers(self.horizon):
                rows = slice(n * (n + 1) // 2, (n + 1) * (n + 2) // 2)
                q[rows, STOP], q[rows, TOSS] = stop, cont
            legal = np.ones((states, 2), dtype=bool)
            legal[0, STOP] = False
            n = np.repeat(np.arange(self.horizon), np.arange(1, self.horizon + 1))
            d = 2 * (np.arange(states) - n * (n + 1) // 2) - n
            policy = np.where((n > 0) & (d >= self.thresholds[n]), STOP, TOSS)
            values = np.where(legal[:, STOP], q.max(axis=1), q[:, TOSS])
            self._arrays = {"state_values": values, "q": q, "policy": policy, "legal": legal}
        return self._arrays


def solve_chow_robbins(model, eps: float = EPS) -> ChowRobbinsSolution:
    """`baselines.solve` for `dice_envs/ChowRobbins-v0`: a `ChowRobbinsSolution`."""
    return ChowRobbinsSolution(model.horizon, eps)
