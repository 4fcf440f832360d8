"""The Ray paths, all but the refused arguments marked `verify` (`make verify`, not in the
default run). On a local Ray: a task ships its run into the sweep's store while the sweep holds
the run's lock, a killed task's run resumes from its last shipped checkpoint, a stop keeps a run
that had finished, and no task store is left on the node; Ray Tune searches hyperparameters on
the exact gap; Ctrl-C stops a Ray sweep. On a two-node Ray cluster whose worker node cannot see
the sweep's run store: a sweep gives the local backend's files and report, and a run whose
worker dies there resumes from its last shipped checkpoint."""

import base64
import json
import os
import pickle
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from training_helpers import CONFIGS, write_configs

from training.runs import RunStoreError, locked, planned_runs, run_dir
from training.sweep import main as sweep_main
from training.tune import main as tune_main

pytest.importorskip("ray")
pytestmark = pytest.mark.slow

ENTRIES = {
    "sum_avoid/qlearning": {"algo": "qlearning", "budget": {"timesteps": 6000, "eval_every": 2000}},
    "d20_rounds/ppo": {
        "algo": "ppo",
        "budget": {"timesteps": 2048, "eval_every": 1024},
        "hyperparams": {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 2},
    },
}
RAY = str(Path(sys.executable).parent / "ray")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _node_options(cpus: int) -> list[str]:
    """`ray start` options of a node with `cpus` CPUs, every port free (other Rays may run)."""
    options = ["--num-cpus", str(cpus), "--block", "--disable-usage-stats"]
    for name in ("node-manager", "object-manager", "dashboard-agent-listen",
                 "dashboard-agent-grpc", "metrics-export", "runtime-env-agent"):  # fmt: skip
        options += [f"--{name}-port", str(_free_port())]
    return options


def _can_hide_folders() -> bool:
    """Whether a process can get a mount namespace of its own (a user namespace if need be)."""
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0


def _stop_node(process: subprocess.Popen) -> None:
    """Stop a `ray start --block` and every process it started (its own process group)."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            process.poll()  # reaps the leader; its children are reaped by init
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
    raise AssertionError(f"processes of Ray node {process.pid} left running")


@pytest.fixture(scope="module")
def cluster():
    """A local Ray cluster of two nodes: a head without CPUs, which the sweep connects to, and a
    worker node with one CPU, its own TMPDIR and working directory, where every task runs. The
    sweeps' stores go under `driver`, which the worker node sees as an empty read-only folder
    (its own mount namespace), so a task that read or wrote there would fail; without
    `unshare` the worker node sees it as it is."""
    base = Path(tempfile.mkdtemp(prefix="ray-ship-", dir="/tmp"))  # short: Ray's socket paths
    driver, worker_tmp = base / "driver", base / "worker-tmp"
    driver.mkdir()
    worker_tmp.mkdir()
    hidden = _can_hide_folders()
    port = _free_port()
    nodes = []
    try:
        with pytest.MonkeyPatch.context() as patch:
            # Token authentication with a token of the cluster's own, in this process too.
            patch.setenv("RAY_AUTH_MODE", "token")
            patch.setenv("RAY_AUTH_TOKEN", secrets.token_hex(32))
            _reread_ray_auth()
            head = [RAY, "start", "--head", "--port", str(port), "--temp-dir", str(base / "ray"),
                    "--include-dashboard", "false", "--dashboard-port", str(_free_port()),
                    *_node_options(0)]  # fmt: skip
            nodes.append(_start_node(head, base / "head.log", base, os.environ))
            worker = [RAY, "start", "--address", f"127.0.0.1:{port}", *_node_options(1)]
            if hidden:
                mount = 'mount -t tmpfs -o ro none "$0" && exec "$@"'
                worker = ["unshare", "-rm", "sh", "-c", mount, str(driver), *worker]
            env = {**os.environ, "TMPDIR": str(worker_tmp)}
            nodes.append(_start_node(worker, base / "worker.log", worker_tmp, env))
            address = f"127.0.0.1:{port}"
            try:
                _check_cluster(address, driver, worker_tmp, hidden, nodes)
            except AssertionError as error:
                raise AssertionError(f"{error}\n{_log_tails(base)}") from None
            yield SimpleNamespace(
                address=address, driver=driver, hidden=hidden, worker_tmp=worker_tmp
            )
    finally:
        for node in reversed(nodes):
            _stop_node(node)
        _reread_ray_auth()  # the environment as it was: a local Ray picks its own mode again
        shutil.rmtree(base, ignore_errors=True)


def _log_tails(base: Path, lines: int = 30) -> str:
    """The last lines of the nodes' logs, to say why a cluster did not start."""
    tails = []
    for log in (base / "head.log", base / "worker.log"):
        text = log.read_text(errors="replace").splitlines()[-lines:] if log.exists() else []
        tails.append(f"--- {log.name}\n" + "\n".join(text))
    return "\n".join(tails)


def _reread_ray_auth() -> None:
    """Make this process read RAY_AUTH_* again: Ray keeps the authentication mode it read at
    import or at its first local `ray.init()` (Ray's own tests reset it the same way)."""
    try:
        from ray._private.authentication_test_utils import reset_auth_token_state
    except ImportError:  # a Ray without token authentication
        return
    reset_auth_token_state()


def _start_node(command: list[str], log: Path, cwd: Path, env) -> subprocess.Popen:
    with open(log, "wb") as output:
        return subprocess.Popen(
            command, cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip


def _check_cluster(address: str, driver: Path, worker_tmp: Path, hidden: bool, nodes) -> None:
    """Wait for both nodes; check that a task runs on the worker node, in its TMPDIR, and (when
    hidden) sees the sweeps' folder empty and read-only."""
    import ray

    deadline = time.monotonic() + 120
    while True:
        assert all(node.poll() is None for node in nodes), "a Ray node did not start"
        try:
            ray.init(address=address, log_to_driver=False)
            break
        except ConnectionError:
            assert time.monotonic() < deadline, "the Ray head did not start"
            time.sleep(1)
    try:
        while sum(node["Alive"] for node in ray.nodes()) < 2:
            assert time.monotonic() < deadline, "the Ray worker node did not join"
            time.sleep(0.5)
        (driver / "marker").write_text("the sweep's")
        seen = ray.get(ray.remote(num_cpus=1)(_task_view()).remote(str(driver)))
        assert seen["tmp"] == str(worker_tmp)
        if hidden:
            assert seen == {"tmp": str(worker_tmp), "listing": [], "writable": False}
        (driver / "marker").unlink()
    finally:
        ray.shutdown()


def _task_view():
    """A function that says what a task sees of `folder`; local, so Ray ships it by value (the
    workers cannot import this test module)."""

    def what_a_task_sees(folder: str) -> dict:
        import os
        import tempfile

        try:
            with open(os.path.join(folder, "probe"), "w"):
                writable = True
        except OSError:
            writable = False
        return {"tmp": tempfile.gettempdir(), "listing": os.listdir(folder), "writable": writable}

    return what_a_task_sees


def _store_files(root: Path) -> dict[str, Path]:
    return {path.relative_to(root).as_posix(): path for path in root.rglob("*") if path.is_file()}


def _sb3_zip(path: Path) -> dict:
    """An SB3 model file's members, without what differs between two runs of the same config
    and seed even on one machine: each member's write time (zip), the wall-clock `start_time`,
    the readable descriptions beside each pickled object (they print memory addresses), and
    the state of the spaces' own random generators (unseeded, never used in training): the
    spaces are compared as spaces, every other object as its pickle."""
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in sorted(archive.namelist())}
    data = json.loads(members.pop("data"))
    del data["start_time"]
    for key, value in data.items():
        if isinstance(value, dict) and ":serialized:" in value:
            data[key] = value[":serialized:"]
    for key in ("observation_space", "action_space"):
        data[key] = pickle.loads(base64.b64decode(data[key]))
    return {**members, "data": data}


def assert_same_stores(local: Path, ray: Path) -> None:
    """The same files with the same bytes, timing.json aside (wall-clock times), SB3's model
    files compared as `_sb3_zip` says."""
    local_files, ray_files = _store_files(local), _store_files(ray)
    assert sorted(local_files) == sorted(ray_files)
    for name, path in local_files.items():
        if path.name == "timing.json":
            continue
        if path.suffix == ".zip":
            assert _sb3_zip(path) == _sb3_zip(ray_files[name]), name
        else:
            assert path.read_bytes() == ray_files[name].read_bytes(), name


def _results_part(report: str) -> str:
    return report.split("## Time")[0]


def _task_stores(folder: Path) -> list[str]:
    """The Ray tasks' temporary stores in `folder` (a node's TMPDIR)."""
    return sorted(path.name for path in folder.glob("dice-envs-*"))


def _killed_run_config(timesteps: int) -> tuple[list, dict, int]:
    """(tasks, config, seed) of one PPO run of `timesteps` steps, a checkpoint every 1,024."""
    entry = dict(ENTRIES["d20_rounds/ppo"], seeds=[0])
    entry["budget"] = {"timesteps": timesteps, "eval_every": 1024}
    with tempfile.TemporaryDirectory() as folder:
        tasks = planned_runs(write_configs(Path(folder), {"d20_rounds/ppo": entry}), "quick")
    [(_, config, seed)] = tasks
    return tasks, config, seed


# The run lengths tried, in turn, by `_killed_mid_run`. On a loaded machine the sweep's polls
# can lag so far behind its task that the whole run has ended before the kill (seen with two
# other trainings on both cores); each such attempt is tried again, in a store of its own,
# with a run 4 times longer.
KILL_LENGTHS = (4096, 16384, 65536)


def _killed_mid_run(address: str | None, root_of, while_training=None) -> tuple:
    """Start one PPO run as a Ray task (on the cluster at `address`; None: the Ray this
    process has started) and kill its worker once the store `root_of(attempt)` holds a
    checkpoint past step 0 of it; `while_training(run folder)` is called after every poll
    until then. Returns (tasks, config, seed, root) of the first attempt killed mid-run."""
    from training.backends import RayBackend

    for attempt, timesteps in enumerate(KILL_LENGTHS):
        tasks, config, seed = _killed_run_config(timesteps)
        root = root_of(attempt)
        checkpoint = run_dir(root, config, seed) / "checkpoint.pkl"
        backend = RayBackend(address, 1)
        try:
            backend.start([(0, config, seed, str(root))])
            ended, deadline = [], time.monotonic() + 120
            while not checkpoint.exists() or pickle.loads(checkpoint.read_bytes())["step"] == 0:
                ended = [m[0] for m in backend.poll(timeout=0.05) if m[0] in ("done", "failed")]
                if ended:
                    break
                assert time.monotonic() < deadline
                if while_training is not None:
                    while_training(checkpoint.parent)
            if ended:
                assert ended == ["done"], ended  # ended before the kill: try a longer run
                continue
            [task] = backend.pending
            backend.ray.cancel(task, force=True)  # kills the worker process mid-run
            deadline = time.monotonic() + 120
            while backend.pending:
                ended += [m[0] for m in backend.poll(timeout=0.05) if m[0] in ("done", "failed")]
                assert time.monotonic() < deadline, "the killed task never ended"
        finally:
            backend.close()
        assert ended == ["failed"]
        return tasks, config, seed, root
    pytest.fail(f"every run ended before its worker could be killed (lengths {KILL_LENGTHS})")


@pytest.fixture
def local_ray(monkeypatch):
    """A local Ray of one CPU whose tasks have a TMPDIR of their own (short: Ray puts its
    sockets there too), to see what tasks leave in it; yields that folder."""
    import ray

    folder = Path(tempfile.mkdtemp(prefix="ray-tmp-", dir="/tmp"))
    monkeypatch.setenv("TMPDIR", str(folder))
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        yield folder
    finally:
        ray.shutdown()
        shutil.rmtree(folder, ignore_errors=True)


# Every test that starts a Ray is `make verify` alone. In one CI run of the default suite the
# pytest worker went down at about this file's place in the order and the suite then hung until
# CI's limit; the cause is not known, but a Ray is several processes that outlive a dead worker,
# and the suite's other tests start none.
@pytest.mark.verify
def test_a_ray_task_ships_its_run_and_a_killed_one_resumes_from_its_last_checkpoint(
    local_ray, tmp_path
):
    from training.backends import RayBackend
    from training.train import READ_BACK, run

    def the_sweep_holds_the_lock(directory: Path) -> None:
        """The sweep holds the run's lock while its task trains elsewhere."""
        with pytest.raises(RunStoreError, match="being trained"), locked(directory):
            pass

    tasks, config, seed, root = _killed_mid_run(
        None, lambda attempt: tmp_path / f"runs{attempt}", the_sweep_holds_the_lock
    )
    directory = run_dir(root, config, seed)
    checkpoint = directory / "checkpoint.pkl"
    shipped = pickle.loads(checkpoint.read_bytes())["step"]
    assert 0 < shipped < config["timesteps"]
    left = {path.name for path in directory.iterdir()}
    assert {"checkpoint.pkl", "curve.json"} <= left and "result.json" not in left
    assert not [name for name in left if name.startswith(".")]  # no lock, no temporary file
    assert len(_task_stores(local_ray)) == 1  # the killed task could not remove its store

    # Again: the task resumes from the shipped checkpoint. A run beside it whose folder holds
    # another run is refused, naming the sweep's folder. A stop (Ctrl-C) that comes after the
    # task ended, before any poll saw it, keeps the finished run.
    other = run_dir(root, config, seed + 1)
    other.mkdir(parents=True)
    (other / "config.yaml").write_text("another: run\n")
    resumed = RayBackend(None, 1)
    resumed.start([(0, config, seed, str(root)), (1, config, seed + 1, str(root))])
    refused = [m for m in resumed.poll(timeout=0) if m[0] in ("done", "failed")]
    assert [m[:2] for m in refused] == [("failed", 1)]
    assert f"{other}/config.yaml describes another run" in refused[0][2]
    [task] = resumed.pending
    assert resumed.ray.wait([task], timeout=120)[0] == [task]
    resumed.stop()
    left = {path.name for path in directory.iterdir()}
    assert {"policy.zip", "result.json"} <= left and "checkpoint.pkl" not in left
    assert not [name for name in left if name.startswith(".")]
    sessions = json.loads((directory / "timing.json").read_text())["sessions"]
    assert [session["start_step"] for session in sessions] == [0, shipped]
    assert _task_stores(local_ray) == []  # the next task on the node removed the killed one's
    # A task of a run the store holds finished (another sweep finished it meanwhile) reads it
    # back and leaves its files as they are.
    finished = {path.name: path.read_bytes() for path in directory.iterdir()}
    again = RayBackend(None, 1)
    again.start([(0, config, seed, str(root))])
    ended = []
    deadline = time.monotonic() + 120
    while again.pending:
        ended += [m for m in again.poll(timeout=0.05) if m[0] in ("done", "failed")]
        assert time.monotonic() < deadline, "the read-back task never ended"
    again.close()
    assert [(kind, result["status"]) for kind, _, result in ended] == [("done", READ_BACK)]
    assert {path.name: path.read_bytes() for path in directory.iterdir()} == finished
    # Locally the same: stopped at that checkpoint, then resumed.
    assert run(config, seed, tmp_path / "local", stop_after=shipped)["stopped_at"] == shipped
    assert run(config, seed, tmp_path / "local")["resumed_at"] == shipped
    shutil.rmtree(other)
    assert_same_stores(tmp_path / "local", root)


def test_bad_ray_backend_arguments_and_shipped_names_are_refused(tmp_path):
    from training.backends import RayBackend, write_shipped

    for workers in (0, True, 1.5):
        with pytest.raises(ValueError, match="workers must be an int >= 1"):
            RayBackend(None, workers)
    with pytest.raises(ValueError, match="address must be a Ray address"):
        RayBackend("", 1)
    for name in ("../result.json", ".lock", "sub/curve.json", ""):
        with pytest.raises(ValueError, match="files: names must be plain file names"):
            write_shipped(tmp_path / "run", {"curve.json": b"[]", name: b"x"}, final=False)
    assert not (tmp_path / "result.json").exists() and not (tmp_path / "run").exists()


@pytest.mark.verify
def test_tune_searches_on_the_exact_gap(tmp_path, capsys):
    configs = write_configs(tmp_path / "configs", ENTRIES)
    code = tune_main(
        [str(configs / "sum_avoid" / "qlearning.yaml"), "--samples", "3", "--workers", "2",
         "--runs", str(tmp_path / "runs")]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "%" in line]
    assert len(rows) == 3
    assert "best hyperparams" in out and "power:" in out
    # Every trial is a run in the store, which a second search reads back.
    assert len(list((tmp_path / "runs" / "sum_avoid" / "qlearning").iterdir())) == 3


@pytest.mark.verify
def test_tune_searches_a_game_too_large_for_tables_on_its_sampled_gap(tmp_path, capsys):
    raw = yaml.safe_load((CONFIGS / "yahtzee" / "ppo.yaml").read_text())
    raw["env_kwargs"] = {"boxes": ["ones", "sixes", "yahtzee"]}  # a small exact evaluation
    raw["hyperparams"].update(n_envs=4, n_steps=64, batch_size=64)
    raw["budgets"]["full"] = {"timesteps": 1024, "eval_every": 512, "seeds": [0]}
    raw["evaluation"] = {"episodes": 20}
    config = tmp_path / "configs" / "yahtzee" / "ppo.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(yaml.safe_dump(raw))
    record = tmp_path / "search.json"
    code = tune_main(
        [str(config), "--budget", "full", "--samples", "2", "--workers", "2", "--runs",
         str(tmp_path / "runs"), "--record", str(record)]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    search = json.loads(record.read_text())
    assert search["objective"] == "sampled_relative_gap"
    finished = [trial for trial in search["trials"] if trial["finished"]]
    for trial in search["trials"]:  # sampled at every point, exact at the end of a whole run
        assert all("sampled_relative_gap" in point for point in trial["curve"])
        assert ("relative_gap" in trial["curve"][-1]) == trial["finished"]
        assert "relative_gap" not in trial["curve"][0]
    assert search["winner"]["final_relative_gap"] == min(t["final_relative_gap"] for t in finished)


@pytest.mark.verify
@pytest.mark.parametrize("sigterm", [False, True], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_stops_a_ray_sweep_and_the_rerun_finishes(tmp_path, sigterm):
    """Ctrl-C to the group, or SIGTERM to the sweep alone (which `ray.init` would otherwise
    take for its own, exiting at once)."""
    from training_helpers import ROOT, assert_complete_files, interrupt_sweep

    configs = write_configs(
        tmp_path / "configs",
        {
            "d20_rounds/ppo": {
                "algo": "ppo",
                "budget": {"timesteps": 12_288, "eval_every": 1024},
                "hyperparams": {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 2},
                "seeds": [0, 1],
            }
        },
    )
    runs = tmp_path / "runs"
    command = [sys.executable, "-m", "training.sweep", "--configs", str(configs), "--runs",
               str(runs), "--out", str(tmp_path / "out"), "--backend", "ray"]  # fmt: skip
    seconds, status, stderr = interrupt_sweep(command, runs, sigterm=sigterm)
    assert seconds < 10 and status == 130, stderr
    assert "run the same command again to resume" in stderr.strip().splitlines()[-1]
    assert_complete_files(runs)
    assert any(pickle.loads(p.read_bytes())["step"] > 0 for p in runs.rglob("checkpoint.pkl"))
    rerun = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert len(list(runs.rglob("result.json"))) == 2


# Last: the cluster (a module fixture) then runs alone, and stops when the module ends.
@pytest.mark.verify
def test_a_sweep_on_a_cluster_without_a_shared_disk_writes_what_a_local_sweep_writes(
    cluster, tmp_path
):
    configs = write_configs(tmp_path / "configs", ENTRIES)
    stores = {"local": tmp_path / "local", "ray": cluster.driver / "sweep"}
    for backend, store in stores.items():
        address = ["--address", cluster.address] if backend == "ray" else []
        code = sweep_main(
            ["--configs", str(configs), "--runs", str(store / "runs"), "--out",
             str(store / "out"), "--backend", backend, "--workers", "2", *address]
        )  # fmt: skip
        assert code == 0
    assert len(planned_runs(configs, "quick")) == 4
    assert len(list((stores["ray"] / "runs").rglob("result.json"))) == 4
    assert_same_stores(stores["local"] / "runs", stores["ray"] / "runs")
    reports = [(store / "out" / "report.md").read_text() for store in stores.values()]
    assert _results_part(reports[0]) == _results_part(reports[1])
    assert "Q-learning, 2 seeds" in reports[0] and "PPO, 2 seeds" in reports[0]


@pytest.mark.verify
def test_a_run_whose_worker_dies_resumes_from_its_last_shipped_checkpoint(cluster, tmp_path):
    from training.backends import RayBackend
    from training.sweep import sweep
    from training.train import RESUMED, run

    tasks, config, seed, root = _killed_mid_run(
        cluster.address, lambda attempt: cluster.driver / f"killed{attempt}" / "runs"
    )
    checkpoint = run_dir(root, config, seed) / "checkpoint.pkl"
    shipped = pickle.loads(checkpoint.read_bytes())["step"]
    assert 0 < shipped < config["timesteps"]
    assert not (checkpoint.parent / "result.json").exists()
    assert len(_task_stores(cluster.worker_tmp)) == 1  # the killed task could not remove it
    results, failures, _ = sweep(tasks, root, RayBackend(cluster.address, 1))
    assert failures == []
    assert _task_stores(cluster.worker_tmp) == []  # the next task on the node removed it
    assert results[0]["status"] == RESUMED and results[0]["resumed_at"] == shipped
    assert results[0]["run_dir"] == str(checkpoint.parent)  # the sweep's folder, not the task's
    # Locally the same: stopped at that checkpoint, then resumed (SB3 records the step a
    # session started at in the model file, so a resumed run is compared with a resumed one).
    assert run(config, seed, tmp_path / "local", stop_after=shipped)["stopped_at"] == shipped
    assert run(config, seed, tmp_path / "local")["resumed_at"] == shipped
    assert_same_stores(tmp_path / "local", root)
