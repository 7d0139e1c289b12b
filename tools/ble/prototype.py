#!/usr/bin/env python3
"""Prototype beacon `near`-zone estimators for the Swift engine, scored on the real BLE walks.

Usage:  python3 tools/ble/prototype.py [--sweep] [--json]

Each model consumes the walk's sightings in time order exactly as the engine would (online, no
look-ahead, clock = largest t so far) and writes enter/exit events like geotrigger's; score.py
turns them into intervals and scores them. Models:

  naive    the issue's baseline: per beacon, EWMA of RSSI per sample (alpha 0.3), d from
           P1m = -59 dBm, n = 2, enter d < 3 m, exit d > 3 m x 1.15, exit after 30 s silence.
  beacon   per beacon, no positions (the recommended default): see BeaconModel.
  fused    with positions: see FusedModel.
  ekf, pf  trackers on the position fed by every sighting's RSSI: see TrackerModel (none
           meets the fused target; README "Trackers").

The physical constants and the reasons for them are in README.md (section "Recommended
algorithm"). Nothing here is fitted to the three walks: --sweep only shows how sensitive the
figures are to each constant around its physical value.
"""
from __future__ import annotations

import argparse
import json
import math
from statistics import NormalDist
import sys
from collections import deque
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import score  # noqa: E402

P1M = -59.0          # dBm at 1 m (SPEC default)
N_EXP = 2.0          # path-loss exponent (SPEC default)
R_NEAR = common.NEAR_RADIUS
BEACON_EXIT = 30.0   # --beacon-exit


def rssi_to_distance(rssi: float, p1m: float = P1M, n: float = N_EXP) -> float:
    return 10 ** ((p1m - rssi) / (10 * n))


def distance_to_rssi(d: float, p1m: float = P1M, n: float = N_EXP) -> float:
    return p1m - 10 * n * math.log10(d)


# ------------------------------------------------------------------ per-beacon engine skeleton

class PerBeaconModel:
    """Per (device, beacon) smoothing + a distance state machine, as the engine runs it.

    Subclasses supply `update(state, t, rssi) -> smoothed dBm or None`. The state machine:
    enter when the smoothed distance < R, exit when it is > R_exit (hysteresis), each after
    `confirm` consecutive sightings agreeing, or exit at last sighting + BEACON_EXIT.
    """
    name = "?"

    def __init__(self, exit_factor=1.15, confirm=1, p1m=P1M, n=N_EXP, z=0.0, enter_factor=1.0,
                 min_in=0.0, min_out=0.0):
        self.exit_factor = exit_factor
        self.enter_factor = enter_factor
        self.confirm = confirm
        # issue 38, a minimum visit: a zone is entered only once the enter rule has held at every
        # sighting for min_in seconds (a visit shorter than that is a graze or a fade); likewise
        # min_out for exits (kept at 0: an exit is not delayed).
        self.min_in, self.min_out = min_in, min_out
        self.z = z          # decide on the estimate's z-sigma bound (update returns (dBm, sigma))
        self.p1m, self.n = p1m, n

    def describe(self):
        return self.name

    def new_state(self):
        return {}

    def update(self, st, t, rssi):
        raise NotImplementedError

    def run(self, rows, sensors):
        events = []
        inside: dict[str, bool] = {}
        last: dict[str, float] = {}
        streak: dict[str, int] = {}
        since: dict[str, float] = {}     # when the current streak began
        states: dict[str, dict] = {}
        for r in rows:
            # timers first: any inside region silent for BEACON_EXIT seconds exits
            for name in [k for k, v in inside.items() if v]:
                if last[name] + BEACON_EXIT < r.t:
                    events.append({"t": last[name] + BEACON_EXIT, "event": "exit",
                                   "device": common.DEVICE, "region": name, "reason": "timeout"})
                    inside[name] = False
                    streak[name] = 0
            name = r.sensor.name
            st = states.setdefault(name, self.new_state())
            last[name] = r.t
            s = self.update(st, r.t, r.rssi)
            if s is None:
                continue
            sigma = 0.0
            if isinstance(s, tuple):
                s, sigma = s
            was = inside.get(name, False)
            # entering needs the weak end of the estimate inside, leaving the strong end outside
            d = rssi_to_distance(s + (self.z * sigma if was else -self.z * sigma), self.p1m, self.n)
            want_change = ((d < R_NEAR * self.enter_factor) if not was
                           else (d > R_NEAR * self.exit_factor))
            streak[name] = streak.get(name, 0) + 1 if want_change else 0
            if streak[name] == 1:
                since[name] = r.t
            hold = self.min_out if was else self.min_in
            if streak[name] >= self.confirm and r.t - since[name] >= hold:
                inside[name] = not was
                streak[name] = 0
                events.append({"t": r.t, "event": "exit" if was else "enter",
                               "device": common.DEVICE, "region": name,
                               "distance": round(d, 2)})
        return events


class NaiveModel(PerBeaconModel):
    """EWMA per sample: s <- s + alpha (rssi - s), seeded with the first sample."""
    name = "naive"

    def __init__(self, alpha=0.25, **kw):
        super().__init__(**kw)
        self.alpha = alpha

    def describe(self):
        return (f"naive EWMA alpha={self.alpha}/sample, P1m={self.p1m}, n={self.n}, "
                f"hysteresis x{self.exit_factor}, exit after {BEACON_EXIT:g} s")

    def update(self, st, t, rssi):
        s = st.get("s")
        st["s"] = rssi if s is None else s + self.alpha * (rssi - s)
        return st["s"]


class BeaconModel(PerBeaconModel):
    """Recommended per-beacon estimator (no positions).

    1. Window: the sightings of this beacon in the last W seconds (W = 2 s: a walker at
       ~1.3 m/s moves ~2.6 m, less than the 3 m zone radius; at ~2 Hz that is ~4 samples).
    2. Gate: m = median of the window; MAD = median |x - m|, floored at 1 dB so integer RSSIs do
       not give MAD = 0; samples farther than k = 3 x 1.4826 x MAD from m are rejected as
       outliers (a fade or a reflection burst).
    3. Estimate: mean (in dBm) of the kept samples of the window -> d by the log-distance model.
       (median alone quantises to whole dB with few samples; the gated mean does not.)
    4. Hysteresis in distance: enter d < R, exit d > R x (1 + h), h = 0.5: the smoothed RSSI
       still has sigma ~ 6 dB / sqrt(4) = 3 dB; 10 n log10(1.5) = 3.5 dB at n = 2, i.e. about one
       sigma of the estimate, so noise alone rarely flips an inside state.
    5. Confirmation: a change needs c = 2 consecutive sightings agreeing (~1 s).
    """
    name = "beacon"

    def __init__(self, window=2.0, k_mad=3.0, exit_factor=1.5, confirm=2, min_samples=1, **kw):
        super().__init__(exit_factor=exit_factor, confirm=confirm, **kw)
        self.window, self.k_mad, self.min_samples = window, k_mad, min_samples

    def describe(self):
        return (f"beacon: window {self.window:g} s, gate {self.k_mad:g}·1.4826·MAD (MAD>=1 dB), "
                f"gated mean, P1m={self.p1m}, n={self.n}, exit d>{self.exit_factor:g}·R, "
                f"confirm {self.confirm}")

    def new_state(self):
        return {"buf": deque()}

    def update(self, st, t, rssi):
        buf = st["buf"]
        buf.append((t, rssi))
        while buf and buf[0][0] <= t - self.window:
            buf.popleft()
        if len(buf) < self.min_samples:
            return None
        return gated_mean([x for _, x in buf], self.k_mad)


def gated_mean(xs, k_mad=3.0):
    xs = np.asarray(xs, float)
    m = float(np.median(xs))
    mad = max(float(np.median(np.abs(xs - m))), 1.0)
    keep = xs[np.abs(xs - m) <= k_mad * 1.4826 * mad]
    return float(keep.mean()) if keep.size else m


class KalmanBeaconModel(PerBeaconModel):
    """1-D Kalman filter on RSSI (dBm), random-walk state, with innovation gating.

    Process noise q [dB^2/s]: a walker at v = 1.3 m/s changes the RSSI at d = 3 m by
    10 n v / (d ln 10) = 3.8 dB/s (n = 2) -> q = 3.8^2 ~ 15 dB^2/s. Measurement noise
    R = 6^2 dB^2 (indoor multipath at 2.4 GHz, typical sigma 4-8 dB). Gate: innovation beyond
    3 sigma is skipped (the covariance still grows, so a real step is accepted after a while).
    """
    name = "kalman"

    def __init__(self, q=15.0, r=36.0, gate=3.0, exit_factor=1.5, confirm=2, env_window=0.0,
                 env_q=1.0, **kw):
        super().__init__(exit_factor=exit_factor, confirm=confirm, **kw)
        self.q, self.r, self.gate = q, r, gate
        # issue 38: body shadowing and fades only weaken a signal, so the strong end of a short
        # window (its env_q quantile over env_window s) is the better reading of the distance.
        self.env_window, self.env_q = env_window, env_q

    def describe(self):
        return (f"kalman: q={self.q:g} dB²/s, R={self.r:g} dB², gate {self.gate:g}σ, "
                f"exit d>{self.exit_factor:g}·R, confirm {self.confirm}")

    def update(self, st, t, rssi):
        if self.env_window > 0:
            buf = st.setdefault("env", deque())
            buf.append((t, rssi))
            while buf and buf[0][0] <= t - self.env_window:
                buf.popleft()
            # the quantile of a window of N(mu, R) readings lies z_q sigma above mu: taken off, so
            # that the measurement still stands for the mean the log-distance model is set for
            offset = NormalDist().inv_cdf(self.env_q) * math.sqrt(self.r) if self.env_q < 1 else 0.0
            rssi = float(np.quantile([x for _, x in buf], self.env_q)) - offset
        if "x" not in st:
            st.update(x=float(rssi), p=self.r, t=t)
            return st["x"], math.sqrt(st["p"])
        st["p"] += self.q * max(t - st["t"], 0.0)
        st["t"] = t
        innov = rssi - st["x"]
        s = st["p"] + self.r
        if innov * innov <= self.gate ** 2 * s:
            k = st["p"] / s
            st["x"] += k * innov
            st["p"] *= 1 - k
        return st["x"], math.sqrt(st["p"])


# ------------------------------------------------------------------ fused (positions)

class FusedModel:
    """Recommended estimator when beacons have positions: fuse all of them into one position.

    Every sighting triggers an update at its time t:
      1. per positioned beacon i with sightings in (t - W, t], W = 2 s: r_i = gated mean dBm
         (as BeaconModel), slant range d_i = 10^((P1m - r_i) / (10 n)).
      2. with >= 3 such beacons, weighted least squares for the horizontal position x:
             minimise  sum_i w_i (|x - b_i| - h_i)^2,   w_i = 1 / d_i^2
         (a log-normal range error has sigma_d proportional to d, so 1/d^2 is the inverse variance),
         h_i = horizontal range = sqrt(max(d_i^2 - dz_i^2, 0)) if heights are used, else d_i.
         Gauss-Newton from the previous estimate (first time: the w-weighted centroid of the
         beacons), at most 10 iterations, stop when the step < 1 cm.
      3. smoothing: x_s <- x_s + a (x - x_s), a = 1 - exp(-dt / tau), tau = 1 s (a walker's
         position is correlated over ~1 s; the WLS window already spans 2 s).
      4. each positioned region: enter when |x_s - b| < R, exit when > R + hyst (hyst = 0.5 m),
         the same confirmation c = 2 updates; exit after BEACON_EXIT s without a sighting of
         that beacon as in SPEC.
    """
    name = "fused"

    def __init__(self, window=2.0, tau=1.0, hyst=0.5, confirm=2, k_mad=3.0, heights=False,
                 device_z=1.2, min_beacons=3, weight_power=2.0, p1m=P1M, n=N_EXP,
                 max_range=0.0, solver="wls", start="prev", vel_q=0.0, strongest=0, free_power=False,
                 rssi_filter="window", q=15.0, r=36.0, decide="distance", p_enter=0.84,
                 p_exit=-1.0, sigma_slow=4.0, sigma_fast=4.0, vmax=0.0, min_in=0.0, min_out=0.0,
                 env_q=0.0):
        self.window, self.tau, self.hyst, self.confirm = window, tau, hyst, confirm
        self.k_mad, self.heights, self.device_z = k_mad, heights, device_z
        self.min_beacons, self.weight_power = min_beacons, weight_power
        self.p1m, self.n, self.max_range = p1m, n, max_range
        self.solver, self.start, self.vel_q = solver, start, vel_q
        self.strongest = strongest
        self.free_power = free_power
        self.rssi_filter, self.q, self.r = rssi_filter, q, r
        self._kal = KalmanBeaconModel(q=q, r=r)
        # decide="prob": zones from the fused position's own uncertainty (issue 26). A beacon's
        # mean RSSI over the window has variance sigma_slow^2 (shadowing by the body and the room,
        # which persists over the window) + sigma_fast^2 / samples (multipath, independent per
        # packet); through the log-distance model that is a variance of ln(range), and the
        # log-range solution's covariance is (J^T W J)^-1. Enter when P(inside R) >= p_enter,
        # leave when P(inside R) <= 1 - p_enter: a hysteresis set by the estimate's spread.
        self.decide, self.p_enter = decide, p_enter
        self.p_exit = p_exit    # < 0: 1 - p_enter
        self.sigma_slow, self.sigma_fast = sigma_slow, sigma_fast
        # issue 38: a person moves at most vmax m/s, so the smoothed position moves no faster
        # (0: no limit); a change of zone must be wanted for min_in / min_out s without a break;
        # env_q > 0: a beacon's range from that quantile of its window instead of the gated mean.
        self.vmax, self.min_in, self.min_out, self.env_q = vmax, min_in, min_out, env_q
        # gate_beacon: the per-beacon decision (KalmanBeaconModel, z 1, the same min_in) as well:
        # 1 = enter only while the beacon's own zone is entered too; 2 = also stay while either is.
        self.gate_beacon = 0
        self.gate_min_in = 0.0      # the gating per-beacon decision's own minimum visit

    def describe(self):
        solver = {"wls": f"range WLS w=1/d^{self.weight_power:g}",
                  "logls": "log-range LS w=n_i (samples)", "grid": "grid ML (dB)",
                  "centroid": f"weighted centroid w=1/d^{self.weight_power:g}"}[self.solver]
        return (f"fused: window {self.window:g} s, {solver}, "
                f"{'max range %g m, ' % self.max_range if self.max_range else ''}"
                f"tau {self.tau:g} s, hysteresis +{self.hyst:g} m, confirm {self.confirm}, "
                f"heights {'device z=%g' % self.device_z if self.heights else 'ignored'}")

    def solve(self, b, h, w, x0):
        x = x0.copy()
        for _ in range(10):
            diff = x - b
            rng = np.maximum(np.linalg.norm(diff, axis=1), 1e-6)
            res = rng - h
            J = diff / rng[:, None]
            A = J.T @ (J * w[:, None])
            g = J.T @ (w * res)
            try:
                step = np.linalg.solve(A + 1e-9 * np.eye(2), g)
            except np.linalg.LinAlgError:
                break
            x = x - step
            if np.hypot(*step) < 0.01:
                break
        return x

    def grid(self, b, h):
        lo, hi = b.min(0) - 1.0, b.max(0) + 1.0
        gx, gy = np.meshgrid(np.arange(lo[0], hi[0], 0.2), np.arange(lo[1], hi[1], 0.2))
        g = np.stack([gx.ravel(), gy.ravel()], 1)
        dist = np.maximum(np.linalg.norm(g[:, None, :] - b[None], axis=2), 0.1)
        e = 10 * self.n * np.log10(dist / h[None])
        if self.free_power:   # unknown common transmit power: remove the mean residual
            e = e - e.mean(1, keepdims=True)
        cost = (e ** 2).sum(1)
        return g[np.argmin(cost)]

    def solve_log(self, b, h, wl, x0):
        # Gauss-Newton on log-range residuals e_i = ln(|x-b_i|) - ln(h_i), equal weights
        x = x0.copy()
        for _ in range(15):
            diff = x - b
            rng = np.maximum(np.linalg.norm(diff, axis=1), 0.1)
            res = np.log(rng / h)
            J = diff / (rng ** 2)[:, None]
            JW = J * wl[:, None]
            A = JW.T @ J
            A = A + 1e-3 * np.eye(2) * np.trace(A)
            step = np.linalg.solve(A, JW.T @ res)
            n = np.hypot(*step)
            if n > 2.0:
                step *= 2.0 / n
            x = x - step
            if n < 0.01:
                break
        return x

    def run(self, rows, sensors):
        pb_in = None
        if self.gate_beacon:
            pb = KalmanBeaconModel(q=15.0, r=36.0, gate=3.0, z=1.0, exit_factor=1.0, confirm=1,
                                   min_in=self.gate_min_in)
            pb_events = pb.run(rows, sensors)
            changes: dict[str, list] = {}
            for e in pb_events:
                changes.setdefault(e["region"], []).append((e["t"], e["event"] == "enter"))

            def pb_in(name, t):
                state = False
                for te, inside_now in changes.get(name, []):
                    if te > t:
                        break
                    state = inside_now
                return state
        bufs: dict[str, deque] = {}
        pos = {s.name: np.array(s.pos[:2]) for s in sensors.values()}
        z = {s.name: s.pos[2] for s in sensors.values()}
        last: dict[str, float] = {}
        inside: dict[str, bool] = {}
        streak: dict[str, int] = {}
        since: dict[str, float] = {}
        x_raw = x_s = None
        t_prev = None
        events = []
        kal: dict[str, dict] = {}
        for r in rows:
            for name in [k for k, v in inside.items() if v]:
                if last[name] + BEACON_EXIT < r.t:
                    events.append({"t": last[name] + BEACON_EXIT, "event": "exit",
                                   "device": common.DEVICE, "region": name, "reason": "timeout"})
                    inside[name] = False
            name = r.sensor.name
            last[name] = r.t
            bufs.setdefault(name, deque()).append((r.t, r.rssi))
            self._kal.update(kal.setdefault(name, {}), r.t, r.rssi)
            names, b, h, w, wl = [], [], [], [], []
            for nm, buf in bufs.items():
                while buf and buf[0][0] <= r.t - self.window:
                    buf.popleft()
                if not buf:
                    continue
                if self.rssi_filter == "kalman":
                    k = kal[nm]
                    rs = k["x"]
                    var = k["p"] + self.q * (r.t - k["t"])
                elif self.env_q > 0:
                    # the strong end of the window, less where that quantile of N(mu, r) lies
                    offset = NormalDist().inv_cdf(self.env_q) * math.sqrt(self.r) if self.env_q < 1 else 0.0
                    rs = float(np.quantile([x for _, x in buf], self.env_q)) - offset
                    var = (self.sigma_slow ** 2 + self.sigma_fast ** 2 / len(buf)) if self.decide == "prob" else self.r / len(buf)
                else:
                    rs = gated_mean([x for _, x in buf], self.k_mad)
                    var = (self.sigma_slow ** 2 + self.sigma_fast ** 2 / len(buf)) if self.decide == "prob" else self.r / len(buf)
                d = rssi_to_distance(rs, self.p1m, self.n)
                if self.max_range and d > self.max_range:
                    continue
                hz = d
                if self.heights:
                    dz = z[nm] - self.device_z
                    hz = math.sqrt(max(d * d - dz * dz, 0.01))
                names.append(nm)
                wl.append(1.0 / var)
                b.append(pos[nm])
                h.append(hz)
                w.append(1.0 / max(d, 0.1) ** self.weight_power)
            if len(names) < self.min_beacons:
                continue
            b, h, w, wl = np.array(b), np.array(h), np.array(w), np.array(wl)
            if self.strongest and len(h) > self.strongest:
                keep = np.argsort(h)[:self.strongest]
                b, h, w, wl = b[keep], h[keep], w[keep], wl[keep]
            centroid = (w[:, None] * b).sum(0) / w.sum()
            if self.solver == "centroid":
                x_raw = centroid
            elif self.solver == "grid":
                x_raw = self.grid(b, h)
            elif self.solver == "logls":
                x_raw = self.solve_log(b, h, wl, x_raw if (x_raw is not None and self.start == "prev") else centroid)
            else:
                x0 = x_raw if (x_raw is not None and self.start == "prev") else centroid
                x_raw = self.solve(b, h, w, x0)
            if x_s is None:
                x_s = x_raw.copy()
            else:
                a = 1 - math.exp(-max(r.t - t_prev, 0.0) / self.tau) if self.tau > 0 else 1.0
                step = a * (x_raw - x_s)
                if self.vmax > 0:
                    limit = self.vmax * max(r.t - t_prev, 0.0)
                    length = float(np.hypot(*step))
                    if length > limit:
                        step = step * (limit / length)
                x_s = x_s + step
            t_prev = r.t
            if self.decide == "prob":
                # Covariance of the log-range solution at x_raw, applied around x_s.
                diff = x_raw - b
                rng = np.maximum(np.linalg.norm(diff, axis=1), 0.1)
                J = diff / (rng ** 2)[:, None]
                k_ln = (LN10 / (10 * self.n)) ** 2          # dB^2 -> (ln range)^2
                A = (J * (1.0 / (k_ln / wl))[:, None]).T @ J
                try:
                    C = np.linalg.inv(A + 1e-9 * np.eye(2))
                    Lc = np.linalg.cholesky(0.5 * (C + C.T) + 1e-9 * np.eye(2))
                except np.linalg.LinAlgError:
                    continue
                cloud = x_s + _STD2 @ Lc.T
            for nm in sorted(pos):
                if nm not in last:   # never heard: no state yet
                    continue
                dist = float(np.linalg.norm(x_s - pos[nm]))
                was = inside.get(nm, False)
                if self.decide == "prob":
                    p_in = float((np.linalg.norm(cloud - pos[nm], axis=1) < R_NEAR).mean())
                    p_exit = self.p_exit if self.p_exit >= 0 else 1 - self.p_enter
                    want = p_in >= self.p_enter if not was else p_in <= p_exit
                else:
                    want = dist < R_NEAR if not was else dist > R_NEAR + self.hyst
                if pb_in is not None:
                    if not was:
                        want = want and pb_in(nm, r.t)
                    elif self.gate_beacon == 2:
                        want = want and not pb_in(nm, r.t)
                streak[nm] = streak.get(nm, 0) + 1 if want else 0
                if streak[nm] == 1:
                    since[nm] = r.t
                # issue 38, a minimum visit: the enter rule must hold at every update for min_in s
                hold = self.min_out if was else self.min_in
                if streak[nm] >= self.confirm and r.t - since[nm] >= hold:
                    inside[nm] = not was
                    streak[nm] = 0
                    events.append({"t": r.t, "event": "exit" if was else "enter",
                                   "device": common.DEVICE, "region": nm,
                                   "distance": round(dist, 2)})
        return events


# ------------------------------------------------------------------ trackers fed by raw RSSI

LN10 = math.log(10.0)
# The room from the dataset's floor plan (cnf/tetam.par "limits"): a deployment knows its floor
# plan; the receiver layout's hull is NOT used. Only models with room=True use it.
ROOM = (0.0, 0.0, 20.660138018121128, 17.64103475472807)


class TrackerModel:
    """Constant-velocity tracker on the horizontal position, updated by every sighting's RSSI.

    State s = (x, y, vx, vy) in the dataset's east/north metres. Motion: white acceleration with
    spectral density q = sigma_a^2 [m^2/s^3] per axis (sigma_a = 0.7 m/s^2: a pedestrian's
    speed changes by < 1 m/s within ~1-2 s); the speed is capped at v_max = 1.5 m/s (fast walk).
    Measurement per sighting of beacon b: rssi = P1m - 10 n log10(rho) + e, e ~ N(0, 6^2 dB^2),
    rho = sqrt(|x - b|^2 + rho0^2), rho0 = 0.5 m (a soft floor: the log model is not valid at
    rho -> 0; 0.5 m is the immediate-zone radius and below every mounting-height offset).
    Initialisation: after the first W = 2 s of sightings, the 1/d^2-weighted centroid of the
    beacons heard (gated mean dBm per beacon, as in `fused`), position sigma 3 m, velocity 0 with
    sigma 1 m/s. Zones as `fused`: D = |x - b|, enter D < 3 m, exit D > 3.5 m, 2 consecutive
    updates; or (decide="prob") on P(D < 3 m) under the tracker's position distribution:
    enter when P > p_enter, exit when P(D < 3.5 m) < p_exit, 2 consecutive updates.
    """
    # no minimum visit (the streak rule shared with FusedModel)
    min_in = 0.0
    min_out = 0.0

    name = "tracker"

    def __init__(self, sigma_a=0.7, v_max=1.5, sigma_db=6.0, rho0=0.5, p1m=P1M, n=N_EXP,
                 gate=0.0, min_rssi=-999.0, room=False, decide="mean", p_enter=0.5,
                 p_exit=0.5, hyst=0.5, confirm=2, init_window=2.0, init_sigma=3.0, seed=1):
        self.sigma_a, self.v_max, self.sigma_db, self.rho0 = sigma_a, v_max, sigma_db, rho0
        self.p1m, self.n, self.gate, self.min_rssi, self.room = p1m, n, gate, min_rssi, room
        self.decide, self.p_enter, self.p_exit = decide, p_enter, p_exit
        self.hyst, self.confirm = hyst, confirm
        self.init_window, self.init_sigma, self.seed = init_window, init_sigma, seed

    def describe(self):
        return (f"{self.name}: CV, sigma_a {self.sigma_a:g} m/s², v_max {self.v_max:g} m/s, "
                f"R {self.sigma_db:g} dB, rho0 {self.rho0:g} m, "
                f"{'gate %gσ, ' % self.gate if self.gate else ''}"
                f"{'rssi >= %g dBm, ' % self.min_rssi if self.min_rssi > -999 else ''}"
                f"{'room clamp, ' if self.room else 'no clamp, '}"
                + (f"decide mean: enter <3 m, exit >{3 + self.hyst:g} m" if self.decide == "mean"
                   else f"decide P(D<3)>{self.p_enter:g}, exit P(D<{3 + self.hyst:g})<{self.p_exit:g}")
                + f", confirm {self.confirm}")

    # subclasses: init(x0, t), predict(dt), update(b, rssi), mean(), p_inside(b, radius)

    def h(self, x, b):
        rho = np.sqrt(((x - b) ** 2).sum(-1) + self.rho0 ** 2)
        return self.p1m - 10 * self.n * np.log10(rho), rho

    def run(self, rows, sensors):
        pos = {s.name: np.array(s.pos[:2]) for s in sensors.values()}
        last: dict[str, float] = {}
        inside: dict[str, bool] = {}
        streak: dict[str, int] = {}
        since: dict[str, float] = {}
        events = []
        init_buf: dict[str, list] = {}
        t0 = None
        started = False
        t_prev = None
        for r in rows:
            for name in [k for k, v in inside.items() if v]:
                if last[name] + BEACON_EXIT < r.t:
                    events.append({"t": last[name] + BEACON_EXIT, "event": "exit",
                                   "device": common.DEVICE, "region": name, "reason": "timeout"})
                    inside[name] = False
            name = r.sensor.name
            last[name] = r.t
            if not started:
                t0 = r.t if t0 is None else t0
                init_buf.setdefault(name, []).append(r.rssi)
                if r.t - t0 < self.init_window or len(init_buf) < 3:
                    continue
                b = np.array([pos[k] for k in init_buf])
                d = np.array([rssi_to_distance(gated_mean(v), self.p1m, self.n)
                              for v in init_buf.values()])
                w = 1 / d ** 2
                self.init((w[:, None] * b).sum(0) / w.sum())
                started, t_prev = True, r.t
                continue
            self.predict(max(r.t - t_prev, 0.0))
            t_prev = r.t
            if r.rssi >= self.min_rssi:
                self.update(pos[name], float(r.rssi))
            m = self.mean()
            for nm in sorted(pos):
                if nm not in last:
                    continue
                was = inside.get(nm, False)
                if self.decide == "mean":
                    dist = float(np.linalg.norm(m - pos[nm]))
                    want = dist < R_NEAR if not was else dist > R_NEAR + self.hyst
                else:
                    dist = float(np.linalg.norm(m - pos[nm]))
                    want = (self.p_inside(pos[nm], R_NEAR) > self.p_enter if not was
                            else self.p_inside(pos[nm], R_NEAR + self.hyst) < self.p_exit)
                streak[nm] = streak.get(nm, 0) + 1 if want else 0
                if streak[nm] == 1:
                    since[nm] = r.t
                # issue 38, a minimum visit: the enter rule must hold at every update for min_in s
                hold = self.min_out if was else self.min_in
                if streak[nm] >= self.confirm and r.t - since[nm] >= hold:
                    inside[nm] = not was
                    streak[nm] = 0
                    events.append({"t": r.t, "event": "exit" if was else "enter",
                                   "device": common.DEVICE, "region": nm,
                                   "distance": round(dist, 2)})
        return events

    def clamp(self, x):
        if self.room:
            x[..., 0] = np.clip(x[..., 0], ROOM[0], ROOM[2])
            x[..., 1] = np.clip(x[..., 1], ROOM[1], ROOM[3])
        return x

    def cap_speed(self, v):
        sp = np.linalg.norm(v, axis=-1, keepdims=True)
        return np.where(sp > self.v_max, v * (self.v_max / np.maximum(sp, 1e-9)), v)


# fixed standard-normal points for P(D < R) under the EKF's Gaussian (deterministic)
_STD2 = np.random.default_rng(12345).standard_normal((400, 2))


class EKFModel(TrackerModel):
    """Extended Kalman filter of TrackerModel (one scalar update per sighting)."""
    name = "ekf"

    def init(self, x0):
        self.s = np.array([x0[0], x0[1], 0.0, 0.0])
        self.P = np.diag([self.init_sigma ** 2] * 2 + [1.0, 1.0])

    def predict(self, dt):
        if dt <= 0:
            return
        F = np.eye(4)
        F[0, 2] = F[1, 3] = dt
        q = self.sigma_a ** 2
        Q1 = q * np.array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])
        Q = np.zeros((4, 4))
        Q[np.ix_([0, 2], [0, 2])] = Q1
        Q[np.ix_([1, 3], [1, 3])] = Q1
        self.s = F @ self.s
        self.P = F @ self.P @ F.T + Q

    def update(self, b, rssi):
        x = self.s[:2]
        hx, rho = self.h(x, b)
        H = np.zeros(4)
        H[:2] = -10 * self.n / LN10 * (x - b) / rho ** 2
        S = H @ self.P @ H + self.sigma_db ** 2
        nu = rssi - hx
        if self.gate and nu * nu > self.gate ** 2 * S:
            return
        K = self.P @ H / S
        self.s = self.s + K * nu
        self.P = self.P - np.outer(K, H @ self.P)
        self.P = 0.5 * (self.P + self.P.T)
        self.s[2:] = self.cap_speed(self.s[2:])
        self.s[:2] = self.clamp(self.s[:2])

    def mean(self):
        return self.s[:2]

    def p_inside(self, b, radius):
        L = np.linalg.cholesky(self.P[:2, :2] + 1e-9 * np.eye(2))
        pts = self.s[:2] + _STD2 @ L.T
        return float((np.linalg.norm(pts - b, axis=1) < radius).mean())


class PFModel(TrackerModel):
    """Bootstrap particle filter of TrackerModel: N particles (x, y, vx, vy), the same CV motion
    (velocity random walk with the same white-acceleration density, speed capped), Gaussian dB
    likelihood, systematic resampling when ESS < N/2. room=True: particles outside the floor
    plan's rectangle get weight 0 (the floor plan is known to a deployment). P(D < R) = weight
    of the particles within R."""
    name = "pf"

    def __init__(self, n_particles=500, **kw):
        super().__init__(**kw)
        self.n_particles = n_particles

    def describe(self):
        return super().describe() + f", {self.n_particles} particles, seed {self.seed}"

    def init(self, x0):
        self.rng = np.random.default_rng(self.seed)
        N = self.n_particles
        self.p = np.zeros((N, 4))
        self.p[:, :2] = x0 + self.init_sigma * self.rng.standard_normal((N, 2))
        self.p[:, 2:] = self.cap_speed(self.rng.standard_normal((N, 2)))
        if self.room:
            self.p[:, :2] = self.clamp(self.p[:, :2])
        self.w = np.full(N, 1.0 / N)

    def predict(self, dt):
        if dt <= 0:
            return
        N = self.n_particles
        # exact discretisation of white acceleration: correlated (pos, vel) increments
        q = self.sigma_a ** 2
        C = q * np.array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])
        L = np.linalg.cholesky(C + 1e-12 * np.eye(2))
        z = self.rng.standard_normal((N, 2, 2))      # [particle, axis, (pos,vel)]
        inc = z @ L.T
        self.p[:, :2] += self.p[:, 2:] * dt + inc[:, :, 0]
        self.p[:, 2:] = self.cap_speed(self.p[:, 2:] + inc[:, :, 1])
        if self.room:
            out = ((self.p[:, 0] < ROOM[0]) | (self.p[:, 0] > ROOM[2]) |
                   (self.p[:, 1] < ROOM[1]) | (self.p[:, 1] > ROOM[3]))
            self.w[out] = 0.0
            if self.w.sum() <= 0:
                self.w[:] = 1.0
            self.p[:, :2] = self.clamp(self.p[:, :2])
            self.w /= self.w.sum()

    def update(self, b, rssi):
        hx, _ = self.h(self.p[:, :2], b)
        nu = rssi - hx
        ll = -0.5 * (nu / self.sigma_db) ** 2
        w = self.w * np.exp(ll - ll.max())
        if w.sum() <= 0 or not np.isfinite(w.sum()):
            return
        self.w = w / w.sum()
        if 1.0 / (self.w ** 2).sum() < self.n_particles / 2:
            N = self.n_particles
            u = (self.rng.random() + np.arange(N)) / N
            idx = np.minimum(np.searchsorted(np.cumsum(self.w), u), N - 1)
            self.p = self.p[idx]
            self.w = np.full(N, 1.0 / N)

    def mean(self):
        return self.w @ self.p[:, :2]

    def p_inside(self, b, radius):
        return float(self.w[np.linalg.norm(self.p[:, :2] - b, axis=1) < radius].sum())


class ShadowEKFModel(EKFModel):
    """EKF with one slow-shadowing state per beacon (the state grows as beacons are first heard).

    RSSI error = slow shadowing s_i (body blocking by the carrier, furniture, walls: persists over
    ~1-2 m of walking, i.e. ~tau_s = 2 s; Gauss-Markov, sigma_slow = 4 dB) + fast multipath
    (independent per packet at 2 Hz, since 2.4 GHz fading decorrelates within ~6 cm; sigma_fast
    = 4 dB). sqrt(4^2 + 4^2) = 5.7 dB, the same total as R = 6 dB. Treating the slow part as white
    makes the plain EKF overconfident and lets it chase persistent offsets."""
    name = "ekf-shadow"

    def __init__(self, sigma_slow=4.0, sigma_fast=4.0, tau_s=2.0, **kw):
        super().__init__(**kw)
        self.sigma_slow, self.sigma_fast, self.tau_s = sigma_slow, sigma_fast, tau_s

    def describe(self):
        return (super().describe() + f"; shadowing states: slow {self.sigma_slow:g} dB "
                f"tau {self.tau_s:g} s, fast {self.sigma_fast:g} dB")

    def init(self, x0):
        super().init(x0)
        self.idx = {}

    def _slot(self, b):
        key = (float(b[0]), float(b[1]))
        if key not in self.idx:
            k = len(self.s)
            self.idx[key] = k
            self.s = np.append(self.s, 0.0)
            P = np.zeros((k + 1, k + 1))
            P[:k, :k] = self.P
            P[k, k] = self.sigma_slow ** 2
            self.P = P
        return self.idx[key]

    def predict(self, dt):
        if dt <= 0:
            return
        n = len(self.s)
        F = np.eye(n)
        F[0, 2] = F[1, 3] = dt
        q = self.sigma_a ** 2
        Q1 = q * np.array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])
        Q = np.zeros((n, n))
        Q[np.ix_([0, 2], [0, 2])] = Q1
        Q[np.ix_([1, 3], [1, 3])] = Q1
        if n > 4:
            a = math.exp(-dt / self.tau_s)
            F[4:, 4:] *= a
            Q[4:, 4:] = np.eye(n - 4) * self.sigma_slow ** 2 * (1 - a * a)
        self.s = F @ self.s
        self.P = F @ self.P @ F.T + Q

    def update(self, b, rssi):
        k = self._slot(b)
        x = self.s[:2]
        hx, rho = self.h(x, b)
        H = np.zeros(len(self.s))
        H[:2] = -10 * self.n / LN10 * (x - b) / rho ** 2
        H[k] = 1.0
        S = H @ self.P @ H + self.sigma_fast ** 2
        nu = rssi - (hx + self.s[k])
        if self.gate and nu * nu > self.gate ** 2 * S:
            return
        K = self.P @ H / S
        self.s = self.s + K * nu
        self.P = self.P - np.outer(K, H @ self.P)
        self.P = 0.5 * (self.P + self.P.T)
        self.s[2:4] = self.cap_speed(self.s[2:4])
        self.s[:2] = self.clamp(self.s[:2])


MODELS = {
    # the baseline
    "naive": lambda: NaiveModel(alpha=0.25),
    # recommended per-beacon (no positions): Kalman in dBm, decide on the 1-sigma bound
    "beacon": lambda: KalmanBeaconModel(q=15.0, r=36.0, gate=3.0, z=1.0, exit_factor=1.0,
                                        confirm=1),
    # explored alternatives, kept for comparison
    "kalman-hyst": lambda: KalmanBeaconModel(q=15.0, r=36.0, gate=3.0, z=0.0, exit_factor=1.15,
                                             confirm=2),
    "gated": lambda: BeaconModel(),
    # recommended with positions: log-range least squares over the beacons heard in 2 s
    "fused": lambda: FusedModel(solver="logls", start="centroid", max_range=10.0, window=2.0,
                                tau=1.0, hyst=0.5, confirm=2),
    "fused-prob": lambda: FusedModel(solver="logls", start="centroid", max_range=10.0, window=2.0,
                                     tau=1.0, confirm=2, decide="prob", p_enter=0.84),
    "fused-wls": lambda: FusedModel(solver="wls", start="prev"),
    "fused-centroid": lambda: FusedModel(solver="centroid"),
    # trackers fed directly by every sighting's RSSI (TrackerModel; README "Trackers")
    "ekf": lambda: EKFModel(),
    "ekf-prob": lambda: EKFModel(decide="prob", p_enter=0.5, p_exit=0.5),
    "ekf-1sigma": lambda: EKFModel(decide="prob", p_enter=0.84, p_exit=0.16),
    "ekf-shadow": lambda: ShadowEKFModel(),
    "ekf-shadow-1sigma": lambda: ShadowEKFModel(decide="prob", p_enter=0.84, p_exit=0.16),
    "pf": lambda: PFModel(),
    "pf-prob": lambda: PFModel(decide="prob", p_enter=0.5, p_exit=0.5),
    "pf-1sigma": lambda: PFModel(decide="prob", p_enter=0.84, p_exit=0.16),
}


def make_model(spec: str):
    """'name' or 'name:key=value,key=value' (e.g. naive:alpha=0.2)."""
    name, _, args = spec.partition(":")
    if name not in MODELS:
        raise SystemExit(f"unknown model {name}; one of {', '.join(MODELS)}")
    m = MODELS[name]()
    for kv in filter(None, args.split(",")):
        k, _, v = kv.partition("=")
        cur = getattr(m, k)
        if isinstance(cur, bool):
            v = v in ("1", "true")
        elif isinstance(cur, (int, float)) and not isinstance(cur, bool):
            v = type(cur)(float(v)) if isinstance(cur, int) else float(v)
        setattr(m, k, v)
    return m


def evaluate(model, walks, sensors):
    res = []
    for w in walks:
        rows = common.load_walk(w, sensors)
        res.append(score.score_walk(w, model.run(rows, sensors), sensors))
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*", default=list(MODELS))
    ap.add_argument("--walk", action="append", default=[])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--per-sensor", action="store_true")
    a = ap.parse_args(argv)
    sensors = common.load_sensors()
    walks = [common.resolve_walk(w) for w in a.walk] or common.default_walks()
    out = []
    for spec in a.models:
        m = make_model(spec)
        res = evaluate(m, walks, sensors)
        out.append({"model": spec, "describe": m.describe(), "walks": res,
                    "overall": score.overall(res)})
        if not a.json:
            print(score.table(res, f"== {spec}: {m.describe()}", a.per_sensor))
            print()
    if a.json:
        print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
