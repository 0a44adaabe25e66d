"""Attack class: edit a file between fix's read and its write (an editor saving, a second fix);
the edit must survive and the file be reported as not written."""

from __future__ import annotations

from tests.attacks.conftest import CUDA_CHECK, write


def test_an_edit_made_after_the_read_is_never_overwritten(tmp_path):
    from migrator.engine.runner import fix_tree, write_outcomes

    target = write(tmp_path, "a.py", CUDA_CHECK)
    untouched = write(tmp_path, "b.py", CUDA_CHECK)
    run = fix_tree(tmp_path, write=False)  # fixes computed from what was read
    edited = CUDA_CHECK + "print('the user typed this meanwhile')\n"
    target.write_text(edited)

    write_outcomes(tmp_path, run.outcomes)

    assert target.read_text() == edited
    outcome = {o.relative: o for o in run.outcomes}
    assert outcome["a.py"].write_error == "changed since it was read; not written (run fix again)"
    assert outcome["b.py"].write_error is None
    assert "torch.version.hip" in untouched.read_text()
