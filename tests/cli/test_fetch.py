"""`replicate fetch` on the command line: exact text, JSON, exit codes."""

from __future__ import annotations

import orjson
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.provenance import MANIFEST_NAME

runner = CliRunner()


def _run(*args, env=None):
    return runner.invoke(app, ["fetch", *args], env=env)


def test_table_output_over_git(release, cache, tmp_path):
    dest = tmp_path / "out"
    r = _run(release.url, "--include", "results/dl19/**", "--include", "results/model.jsonl", "--dest", str(dest))
    assert r.exit_code == 0, r.output
    detail = ("Git LFS pointer to 11.8 MiB (oid sha256:4d7a214614ab...): the data lives in LFS storage, "
              "not in the repository; not written (no LFS endpoint known for this source: pass --lfs-url)")
    assert r.stdout == (
        f"source   {release.path.resolve().as_uri()}\n"
        f"commit   {release.head} (default branch main)\n"
        "via      git\n"
        "licence  unknown (plain git; root licence file: none)\n"
        "files    2 written, 0 unchanged, 1 skipped, 6 not matching --include\n"
        "size     69 B\n"
        f"dest     {dest}\n"
        "\n"
        "skipped:\n"
        f"path                 reason       detail\n"
        f"-------------------  -----------  {'-' * len(detail)}\n"
        f"results/model.jsonl  lfs-pointer  {detail}\n"
    )


def test_table_output_over_http_says_no_licence(release, github, cache, tmp_path):
    env = {"REPLICATE_GITHUB_API": github.api, "REPLICATE_GITHUB_RAW": github.raw}
    dest = tmp_path / "out"
    r = _run("org/study", "--rev", "v1", "-i", "results_2020/", "-d", str(dest), env=env)
    assert r.exit_code == 0, r.output
    assert r.stdout == (
        "source   org/study\n"
        f"commit   {release.first} (v1)\n"
        "via      http\n"
        "licence  no licence: reuse of the data is not licensed\n"
        "created  2021-03-04T05:06:07Z\n"
        "files    1 written, 0 unchanged, 0 skipped, 3 not matching --include\n"
        "size     23 B\n"
        f"dest     {dest}\n"
    )


def test_json_output_is_the_manifest_plus_actions(release, cache, tmp_path):
    dest = tmp_path / "out"
    r = _run(release.url, "-i", "results/**", "-d", str(dest), "--max-size", "4K", "--format", "json")
    assert r.exit_code == 0, r.output
    out = orjson.loads(r.stdout)
    manifest = orjson.loads((dest / MANIFEST_NAME).read_bytes())
    assert {k: v for k, v in out.items() if k not in ("dest", "actions")} == manifest
    assert out["dest"] == str(dest)
    assert out["actions"]["written"] == ["results/dl19/run_a.jsonl", "results/dl19/run_b.jsonl", "results/notes.txt"]
    assert [(s["path"], s["reason"]) for s in out["skipped"]] == [
        ("results/big.bin", "too-large"), ("results/model.jsonl", "lfs-pointer"), ("results/readme_link", "symlink")]
    assert r.stderr == 'warning: 3 selected file(s) skipped; see "skipped" in the output\n'


def test_check_passes_then_fails_naming_files(release, cache, tmp_path):
    dest = tmp_path / "out"
    assert _run(release.url, "-i", "results/dl19/**", "-d", str(dest)).exit_code == 0
    ok = _run("--check", str(dest))
    assert ok.exit_code == 0
    assert ok.stdout == (f"{dest}: {release.path.resolve().as_uri()} at {release.head}\n"
                         "all 2 files match the manifest\n")
    (dest / "results/dl19/run_b.jsonl").write_text("x\n")
    (dest / "results/dl19/run_a.jsonl").unlink()
    bad = _run("--check", str(dest))
    assert bad.exit_code == 1
    assert bad.stdout == (
        f"{dest}: {release.path.resolve().as_uri()} at {release.head}\n"
        "2 of 2 files do not match the manifest:\n"
        "path                      problem    size\n"
        "------------------------  ---------  -------------\n"
        "results/dl19/run_a.jsonl  missing    -\n"
        "results/dl19/run_b.jsonl  changed    23 -> 2 bytes\n"
    )
    assert bad.stderr == ("Error: 2 of 2 files do not match replicate-manifest.json: "
                          "results/dl19/run_a.jsonl (missing), results/dl19/run_b.jsonl (changed)\n")
    js = _run("--check", str(dest), "-f", "json")
    assert js.exit_code == 1 and orjson.loads(js.stdout)["ok"] is False


def test_check_on_a_directory_without_manifest(tmp_path):
    r = _run("--check", str(tmp_path))
    assert r.exit_code == 2
    assert r.stderr == f"Error: {tmp_path}: no replicate-manifest.json here: not a directory written by replicate fetch\n"


@pytest.mark.parametrize("files, message", [
    ([{"path": "../../etc/passwd", "size": 1, "sha256": "0" * 64}],
     "manifest lists the file path '../../etc/passwd', which is refused: "
     "'..' component escapes or aliases the destination"),
    ([{"path": "/etc/passwd", "size": 1, "sha256": "0" * 64}],
     "manifest lists the file path '/etc/passwd', which is refused: absolute path"),
    ([{"path": "a.jsonl", "sha256": "0" * 64}], "manifest is malformed: missing field 'size'"),
])
def test_check_refuses_a_tampered_or_broken_manifest(tmp_path, files, message):
    manifest = {"schema_version": 1, "source": "org/study", "commit": "a" * 40,
                "fetched_at": "2024-01-01T00:00:00Z", "via": "http", "files": files}
    (tmp_path / MANIFEST_NAME).write_bytes(orjson.dumps(manifest))
    r = _run("--check", str(tmp_path))
    assert r.exit_code == 2
    assert r.stderr == f"Error: {tmp_path / MANIFEST_NAME}: {message}\n"


def test_usage_errors(release, tmp_path):
    r = _run()
    assert r.exit_code == 2 and r.stderr == "Error: missing SOURCE (owner/repo, URL or path), or pass --check DIR\n"
    r = _run(release.url, "--check", str(tmp_path))
    assert r.exit_code == 2 and "--check DIR takes no SOURCE" in r.stderr
    r = _run(release.url, "--max-size", "lots", "-d", str(tmp_path / "o"))
    assert r.exit_code == 2 and r.stderr == ("Error: max_size: cannot read 'lots'; give bytes, optionally with "
                                             "K, M, G or T (binary units)\n")


def test_markdown_output(release, cache, tmp_path):
    dest = tmp_path / "out"
    r = _run(release.url, "--rev", "v1", "-i", "README.md", "-d", str(dest), "-f", "markdown")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].replace(" ", "") == "|field|value|"
    assert lines[2].replace(" ", "") == "|source|" + release.path.resolve().as_uri() + "|"
    assert lines[3].replace(" ", "") == f"|commit|{release.first}(v1)|"
    assert lines[5].replace(" ", "") == "|licence|unknown(plaingit;rootlicencefile:none)|"


def test_errors_show_the_options_the_library_names_as_parameters(release, cache, tmp_path):
    src = release.path.resolve().as_uri()
    r = _run(release.url, "--via", "http", "-d", str(tmp_path / "o"))
    assert r.exit_code == 2 and r.stderr == (
        "Error: --via http needs a GitHub source (owner/repo or https://github.com/owner/repo); "
        f"{src} is served by git only: use --via git or auto\n")
    r = _run(release.url, "--include", "nothing/**", "-d", str(tmp_path / "o"))
    assert r.exit_code == 2 and r.stderr.startswith("Error: --include 'nothing/**' matched no file of ")
    r = _run(release.url, "--rev", "-x", "-d", str(tmp_path / "o"))
    assert r.exit_code == 2 and r.stderr == "Error: --rev '-x': a revision cannot start with '-'\n"
