"""Reference for the black_scholes examples (CUDA SDK formulation).

Parameters of every version (in this order): n (number of options), riskFree,
volatility (scalars) (inputs); callResult, putResult: float32[n] (outputs);
stockPrice, optionStrike, optionYears: float32[n] (inputs).
The normal CDF is the SDK's polynomial approximation, as in the kernels.
"""

from __future__ import annotations

import numpy as np

KERNEL = "black_scholes"
INPUTS = ("stockPrice", "optionStrike", "optionYears")
OUTPUTS = ("callResult", "putResult")

#: Small sizes for tests; most do not divide 256 or 1024.
SIZES = [{"n": 1}, {"n": 37}, {"n": 100}, {"n": 1024}, {"n": 10_007}]

#: Table III: 4 * 10^6 options.
PAPER_SIZES = [{"n": 4_000_000}]

DIVISIBLE_BY: dict = {}

#: Prices up to about 100; float32 exp/log on the device.
TOLERANCE = {"rtol": 1e-4, "atol": 1e-3}


def inputs(rng: np.random.Generator, n: int, riskFree: float = 0.02,  # noqa: N803
           volatility: float = 0.30) -> dict:
    """The SDK's ranges: price 5..30, strike 1..100, years 0.25..10."""
    return {
        "n": n, "riskFree": np.float32(riskFree), "volatility": np.float32(volatility),
        "stockPrice": rng.uniform(5.0, 30.0, n).astype(np.float32),
        "optionStrike": rng.uniform(1.0, 100.0, n).astype(np.float32),
        "optionYears": rng.uniform(0.25, 10.0, n).astype(np.float32),
    }


def _cnd(d: np.ndarray) -> np.ndarray:
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    cnd = 0.3989422804 * np.exp(-0.5 * d * d) * (
        k * (0.31938153 + k * (-0.356563782 + k * (1.781477937
             + k * (-1.821255978 + k * 1.330274429)))))
    return np.where(d > 0.0, 1.0 - cnd, cnd)


def reference(n: int, riskFree: float, volatility: float, stockPrice: np.ndarray,  # noqa: N803
              optionStrike: np.ndarray, optionYears: np.ndarray, **_) -> dict:  # noqa: N803
    s = stockPrice.astype(np.float64)
    x = optionStrike.astype(np.float64)
    t = optionYears.astype(np.float64)
    r, v = float(riskFree), float(volatility)
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    cnd1, cnd2 = _cnd(d1), _cnd(d2)
    exp_rt = np.exp(-r * t)
    call = s * cnd1 - x * exp_rt * cnd2
    put = x * exp_rt * (1.0 - cnd2) - s * (1.0 - cnd1)
    return {"callResult": call.astype(np.float32), "putResult": put.astype(np.float32)}


def flops(n: int, **_) -> int:
    """Approximate: the SDK counts about 50 operations per option."""
    return 50 * n


def bytes_moved(n: int, **_) -> int:
    return 20 * n
