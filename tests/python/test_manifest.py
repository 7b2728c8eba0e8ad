"""The neuroncore platform's kernel=file mode refuses bad manifests before the
run: one line, exit 2 (SimulationError in Python), never a crash."""
import json

import pytest

from trn3vp import SimulationError, _worker, kernel as nk


@pytest.fixture
def kernel_dir(tmp_path):
    k = nk.Kernel()
    k.sync.halt()
    (tmp_path / "k.trn3prog").write_bytes(k.container())
    (tmp_path / "in.bin").write_bytes(bytes(64))
    return tmp_path


def run_manifest(folder, manifest, *params):
    path = folder / "kernel.json"
    path.write_text(json.dumps(manifest) if not isinstance(manifest, str) else manifest)
    args = ["run", "--platform", "neuroncore", "-p", "neuroncore.kernel=file", "-p", f"neuroncore.kernel_file={path}"]
    for p in params:
        args += ["-p", p]
    return _worker.simulate(args, timeout=120)


def test_a_good_manifest_runs(kernel_dir):
    done = run_manifest(kernel_dir, {"program": "k.trn3prog", "inputs": [{"address": 0, "file": "in.bin"}],
                                     "outputs": [{"address": 0, "bytes": 64, "file": "out.bin"}],
                                     "result": "result.json"})
    assert done.exit_code == 0 and "platform neuroncore: PASSED" in done.stdout
    assert (kernel_dir / "out.bin").read_bytes() == bytes(64)
    assert json.loads((kernel_dir / "result.json").read_text())["finished"] is True


@pytest.mark.parametrize("manifest,message", [
    ({"inputs": []}, "key 'program' not found"),
    ({"program": "k.trn3prog", "output": []}, "the manifest: unknown key 'output'"),
    ({"program": "k.trn3prog", "inputs": [{"address": 1.5, "file": "in.bin"}]}, "'address' is 1.5, not a whole"),
    ({"program": "k.trn3prog", "inputs": [{"address": -8, "file": "in.bin"}]}, "'address' is -8, not a whole"),
    ({"program": "k.trn3prog", "inputs": [{"address": (12 << 30) - 8, "file": "in.bin"}]}, "holds the code"),
    ({"program": "k.trn3prog", "outputs": [{"address": 0, "bytes": 8, "file": "a"}, {"address": 8, "bytes": 8,
                                                                                   "file": "a"}]},
     "two outputs write"),
    ({"program": "k.trn3prog", "outputs": [{"address": 0, "bytes": 8, "file": "r.json"}], "result": "r.json"},
     "the result and an output both write"),
    ({"program": "k.trn3prog", "outputs": [{"address": 0, "bytes": 8, "file": "no/such/dir/out.bin"}]},
     "cannot write it"),
    ({"program": "k.trn3prog", "result": "no/such/dir/r.json"}, "cannot write it"),
    ({"program": "missing.trn3prog"}, "missing.trn3prog"),
    ("{not json", "parse error"),
])
def test_bad_manifests_are_one_line_errors(kernel_dir, manifest, message):
    with pytest.raises(SimulationError, match=message):
        run_manifest(kernel_dir, manifest)


def test_bad_containers_and_a_small_device(kernel_dir):
    (kernel_dir / "bad.trn3prog").write_bytes(b"TRN3PROG" + bytes(8))
    with pytest.raises(SimulationError, match="program: container version 0"):
        run_manifest(kernel_dir, {"program": "bad.trn3prog"})
    two = bytearray((kernel_dir / "k.trn3prog").read_bytes())
    two[12] = 2  # claims two cores
    (kernel_dir / "two.trn3prog").write_bytes(bytes(two) + bytes(40))
    with pytest.raises(SimulationError, match="program: "):
        run_manifest(kernel_dir, {"program": "two.trn3prog"})
    # A sync instruction filed in the tensor stream.
    wrong = bytearray((kernel_dir / "k.trn3prog").read_bytes())
    sync_offset = int.from_bytes(wrong[16 + 4 * 8:16 + 4 * 8 + 4], "little")
    wrong[16:24] = wrong[16 + 4 * 8:16 + 4 * 8 + 8]  # the tensor stream points at the sync stream's code
    assert sync_offset
    (kernel_dir / "wrong.trn3prog").write_bytes(bytes(wrong))
    with pytest.raises(SimulationError, match="an instruction of engine sync in the tensor stream"):
        run_manifest(kernel_dir, {"program": "wrong.trn3prog"})
    with pytest.raises(SimulationError, match="their code above it"):
        run_manifest(kernel_dir, {"program": "k.trn3prog"}, "neuroncore.device.size=1GiB")
