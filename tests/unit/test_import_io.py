"""`paddlegen import`'s files, where its specs go, and the verdicts on them (the library)."""

from __future__ import annotations

import pytest

from paddlegen.authoring.import_io import SpecOutput, import_files
from paddlegen.authoring.importer import import_jobs
from paddlegen.errors import InputError, LossyImportError, OutputError, SpecError
from tests.helpers import LOSSY_JOB

TWO_JOBS = LOSSY_JOB + "---\n" + LOSSY_JOB.replace("name: demo", "name: other")


@pytest.mark.parametrize(
    ("output", "folder", "file"),
    [(None, None, None), ("-", None, None), ("spec.yaml", None, "spec.yaml"), ("j/", "j/", None)],
)
def test_the_output_is_a_folder_a_file_or_stdout(output, folder, file):
    where = SpecOutput(output)
    assert (where.folder, where.file) == (folder, file)


def test_a_folder_gets_a_spec_per_job_and_one_file_only_one_job(tmp_path):
    folder = SpecOutput(f"{tmp_path}/jobs/")
    result = import_jobs([("in.yaml", TWO_JOBS)], folder.spec_file)
    files = folder.files(result)
    assert list(files) == [f"{tmp_path}/jobs/demo.yaml", f"{tmp_path}/jobs/other.yaml"]
    assert folder.write(files) == dict.fromkeys(files, True)
    assert folder.write(files) == dict.fromkeys(files, False)  # they hold it already
    (tmp_path / "jobs" / "other.yaml").write_text("mine\n")
    with pytest.raises(OutputError, match="nothing written"):
        folder.write(files)
    for output in (None, str(tmp_path / "one.yaml")):
        with pytest.raises(InputError, match="the input holds 2 jobs"):
            SpecOutput(output).files(result)
    assert not (tmp_path / "one.yaml").exists()


def test_stdout_gets_no_file_and_no_modeline_note():
    where = SpecOutput("-")
    files = where.files(import_jobs([("in.yaml", LOSSY_JOB)], where.spec_file))
    assert files == {}
    assert where.modeline_note(files) is None


def test_the_findings_list_each_jobs_notes_in_input_order_then_its_validation():
    result = import_jobs([("in.yaml", TWO_JOBS)])
    where = [(d.file, d.line, d.rule) for d in result.findings()]
    one_job = [
        ("in.yaml", 1, "import-note"),
        ("in.yaml", 1, "import-note"),
        ("in.yaml", 7, "import-note"),
        ("in.yaml", 9, "import-lossy"),
        ("<imported>", 6, "limits-missing"),  # validating the spec, which names no file here
    ]
    second = [(f, line + 10 if f == "in.yaml" else line, rule) for f, line, rule in one_job]
    assert where == one_job + second  # the second job's input is 10 lines further down
    result.refuse_invalid()  # warnings only: nothing to refuse
    with pytest.raises(LossyImportError, match="^2 lossy notes: the spec would not run as"):
        result.refuse_lossy()
    result.refuse_lossy(accept=True)


def test_an_invalid_spec_is_refused_with_every_finding():
    result = import_jobs([("in.yaml", LOSSY_JOB.replace("name: demo", "name: Demo_X"))])
    with pytest.raises(SpecError, match="an imported spec is invalid") as caught:
        result.refuse_invalid()
    assert caught.value.diagnostics == result.findings()
    assert caught.value.diagnostics[-1].rule == "schema"


def test_the_modeline_note_speaks_of_the_first_spec_only_when_it_lacks_one(tmp_path):
    from paddlegen.authoring.init import MODELINE

    first, second = str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")
    note = SpecOutput(f"{tmp_path}/").modeline_note({first: "spec: {}\n", second: ""})
    assert note is not None
    assert note.startswith(f"paddlegen: no yaml-language-server modeline in {first}: ")
    assert SpecOutput(first).modeline_note({first: f"{MODELINE}x.json\n"}) is None


def test_files_are_read_by_name_and_stdin_is_named_so(tmp_path, monkeypatch):
    import io

    source = tmp_path / "in.yaml"
    source.write_text(LOSSY_JOB)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(LOSSY_JOB.encode())))
    result = import_files([str(source), "-"], SpecOutput(f"{tmp_path}/out/"))
    assert {d.file for d in result.findings()} >= {str(source), "<stdin>"}
