"""Opt-in and fallback code inside reachable modules: what the scorer reads from a file's syntax
tree, and how it moves a work item out of the core and softens a crash."""

from __future__ import annotations

import textwrap

from migrator.model import FileResult, Finding, ScanResult, Severity, Status
from migrator.reporting import html, markdown, report_json
from migrator.reporting import readiness as r
from migrator.reporting.readiness.optin import file_facts


def facts(source: str, name: str = "mod.py") -> r.FileFacts:
    return file_facts(textwrap.dedent(source), name)


def test_a_try_whose_handler_goes_on_is_a_fallback():
    found = facts(
        """\
        import subprocess
        def gpu_name():
            try:
                out = subprocess.check_output(["nvidia-smi", "-L"])
                return out.decode()
            except FileNotFoundError:
                return "NA"
        def strict():
            try:
                subprocess.check_output(["nvidia-smi"])
            except OSError:
                raise SystemExit("no GPU")
        def unrelated(d):
            try:
                return d["k"]
            except KeyError:
                return None
        """
    )
    assert found.fallbacks == ((4, 5),)
    assert found.falls_back(4) and not found.falls_back(10) and not found.falls_back(15)


def test_packages_imported_under_an_import_fallback_are_optional():
    found = facts(
        """\
        try:
            import apex
            from apex import amp
        except ImportError:
            amp = None
        def init():
            try:
                import pynvml
            except ImportError:
                return
        import torch
        """
    )
    assert found.optional_imports == frozenset({"apex", "pynvml"})


def test_one_of_several_registered_implementations_is_opt_in():
    found = facts(
        """\
        class Registry:
            def register(self, name):
                return lambda f: f
        backends = Registry()

        @backends.register("native")
        def native(q):
            return q

        @backends.register("cudnn")
        def cudnn(q):
            return q
        """
    )
    assert found.opt_in_at(7).startswith("one of 2 implementations registered with `backends")
    assert found.opt_in_at(11) and not found.opt_in_at(2)


def test_a_single_registration_is_not_opt_in():
    found = facts(
        """\
        @registry.register("only")
        def only(q):
            return q
        """
    )
    assert found.opt_in == ()


def test_a_branch_on_a_default_off_parameter_is_opt_in():
    found = facts(
        """\
        def build(model, use_flash_attention_2=False, name=None, fast=True):
            if use_flash_attention_2:
                model.attn = "flash_attention_2"
            if name is not None and model:
                model.name = name
            if fast:
                model.fast = True
            return model
        """
    )
    assert found.opt_in_at(3) == "a branch taken only when `use_flash_attention_2` is turned on"
    assert found.opt_in_at(5) == "a branch taken only when `name` is turned on"
    assert found.opt_in_at(7) == ""  # defaults to on: every call takes it


def test_setup_py_extras_are_opt_in():
    source = """\
        from setuptools import setup
        extra_deps = {}
        extra_deps["gpu"] = [
            "flash-attn==2.7.4.post1",
        ]
        setup(
            name="x",
            install_requires=["torch"],
            extras_require={"dev": ["pytest"]},
        )
        """
    found = facts(source, "setup.py")
    assert found.opt_in_at(4) == "an optional extra"
    assert found.opt_in_at(9) == "an optional extra"
    assert found.opt_in_at(8) == ""
    assert facts(source, "other.py").opt_in_at(4) == ""


def test_a_file_that_does_not_parse_has_no_facts():
    assert facts("def broken(:\n") == r.FileFacts()


def write(root, relative, text):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


def finding(rule, path, line, severity=Severity.ERROR, category="general"):
    return Finding(rule, "", category, severity, path, line, 1, line, 1, "message")


def test_sites_in_fallbacks_and_opt_in_code_weigh_apart(tmp_path):
    write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "app"\n[project.scripts]\napp = "app.cli:main"\n',
    )
    write(
        tmp_path,
        "app/__init__.py",
        "",
    )
    write(
        tmp_path,
        "app/cli.py",
        """\
        import subprocess
        import torch
        from app import attention

        def main(fast_path=False):
            try:
                subprocess.run(["nvidia-smi"])
            except FileNotFoundError:
                pass
            if fast_path:
                torch.backends.cudnn.enabled = True
            torch.cuda.synchronize()
        """,
    )
    write(
        tmp_path,
        "app/attention.py",
        """\
        @backends.register("native")
        def native(q):
            return q

        @backends.register("cudnn")
        def cudnn(q):
            return q
        """,
    )
    write(tmp_path, "app/plugins/__init__.py", "")
    write(tmp_path, "app/plugins/fp8.py", "import torch\nX = 1\n")
    write(tmp_path, "app/loader.py", "def load():\n    from app.plugins import fp8\n")
    findings = [
        finding("ROC210", "app/cli.py", 7),  # nvidia-smi in a fallback
        finding("ROC902", "app/cli.py", 11),  # default-off branch
        finding("ROC902", "app/cli.py", 12),  # every run
        finding("ROC151", "app/attention.py", 6),  # a registered alternative
    ]
    layout = r.analyze(
        tmp_path,
        [
            "pyproject.toml",
            "app/__init__.py",
            "app/cli.py",
            "app/attention.py",
            "app/plugins/__init__.py",
            "app/plugins/fp8.py",
            "app/loader.py",
        ],
    )
    sites, _ = r.sites_of(findings, layout)
    by_line = {(site.path, site.line): site for site in sites}
    fallback = by_line[("app/cli.py", 7)]
    assert fallback.fallback and fallback.consequence == "performance" and fallback.tier == r.CORE
    branch = by_line[("app/cli.py", 11)]
    assert branch.role == r.OPT_IN and branch.tier == r.PERIPHERAL
    assert branch.opt_in == "a branch taken only when `fast_path` is turned on"
    core = by_line[("app/cli.py", 12)]
    assert core.role == r.CORE and core.consequence == "crash-path" and not core.opt_in
    registered = by_line[("app/attention.py", 6)]
    assert registered.role == r.OPT_IN and registered.opt_in.startswith("one of 2 implementations")
    assert layout.roles["app/plugins/fp8.py"] == r.OPT_IN


def test_a_helper_called_only_from_opt_in_code_is_opt_in(tmp_path):
    write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "app"\n[project.scripts]\napp = "app.cli:main"\n',
    )
    write(tmp_path, "app/__init__.py", "")
    write(
        tmp_path,
        "app/cli.py",
        """\
        import torch
        from app.checks import check_fp8, check_device

        def main(load_in_fp8=False):
            if load_in_fp8 and torch.cuda.is_available():
                check_fp8()
            check_device()
        """,
    )
    write(
        tmp_path,
        "app/checks.py",
        """\
        import torch

        def check_fp8():
            return torch.version.cuda is not None

        def check_device():
            return torch.version.cuda is not None
        """,
    )
    write(tmp_path, "tests/test_checks.py", "from app.checks import check_fp8\ncheck_fp8()\n")
    paths = [
        "pyproject.toml",
        "app/__init__.py",
        "app/cli.py",
        "app/checks.py",
        "tests/test_checks.py",
    ]
    layout = r.analyze(tmp_path, paths)
    sites, _ = r.sites_of(
        [finding("ROC101", "app/checks.py", 4), finding("ROC101", "app/checks.py", 7)], layout
    )
    fp8, device = sites
    # The test's call does not count; the only reachable call is in a default-off branch.
    assert fp8.role == r.OPT_IN and fp8.opt_in == "`check_fp8` is called only from opt-in code"
    assert device.role == r.CORE and device.tier == r.CORE and not device.opt_in


def test_reports_say_why_an_item_is_opt_in(tmp_path):
    write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "app"\n[project.scripts]\napp = "app.cli:main"\n',
    )
    write(tmp_path, "app/__init__.py", "")
    write(
        tmp_path,
        "app/cli.py",
        """\
        import torch

        def main(use_cudnn=False):
            if use_cudnn:
                torch.backends.cudnn.enabled = True
        """,
    )
    found = finding("ROC151", "app/cli.py", 5)
    scan = ScanResult(str(tmp_path), [FileResult("app/cli.py", Status.SCANNED, (found,))])
    report = r.build_report([("app", scan)])
    item = report.projects[0].work[0]
    assert item.opt_in == "a branch taken only when `use_cudnn` is turned on"
    assert report.projects[0].verdict is r.Verdict.READY
    assert "(opt-in: a branch taken only when `use_cudnn` is turned on)" in markdown.render(report)
    shown = "(opt-in: a branch taken only when <code>use_cudnn</code> is turned on)"
    assert shown in html.render(report)  # code spans are HTML code there
    project = report_json.report_dict(report)["projects"][0]
    assert project["peripheral_work_items"][0]["opt_in"] == (
        "a branch taken only when `use_cudnn` is turned on"
    )
    assert project["verdict"] == "ready" and project["band"] == [70, 100]
    assert project["verdict_rule"] == "nothing reachable from the entry points breaks on ROCm"
    assert 70 <= project["score"] <= 100


def test_decorator_arguments_of_a_registered_alternative_are_opt_in():
    found = facts(
        """\
        @backends.register(
            "flash3",
            constraints=[check_sm(9, 0)],
        )
        def flash3(q):
            return q

        @backends.register("native", constraints=[check_sm(8, 0)])
        def native(q):
            return q
        """
    )
    assert found.opt_in_at(3).startswith("one of 2 implementations registered")
    assert found.opt_in_at(8) and not found.opt_in_at(7)


def test_packages_imported_under_an_availability_check_are_optional():
    found = facts(
        """\
        from .utils import is_xformers_available
        if is_xformers_available():
            import xformers
            import xformers.ops
        if importlib.util.find_spec("apex") and enabled:
            from apex import amp
        if ready():
            import pynvml
        """
    )
    assert found.optional_imports == frozenset({"xformers", "apex"})


def test_an_enable_method_runs_only_when_a_user_calls_it():
    found = facts(
        """\
        import torch
        class Model:
            def enable_layerwise_casting(self, storage_dtype=torch.float8_e4m3fn):
                self.dtype = storage_dtype
            def forward(self, x):
                return x
        """
    )
    assert found.opt_in_at(3) == "runs when a user calls `enable_layerwise_casting`"
    assert found.opt_in_at(4) and not found.opt_in_at(6)


def test_a_closure_is_opt_in_when_its_factory_is_called_only_from_opt_in_code(tmp_path):
    write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "app"\n[project.scripts]\napp = "app.cli:main"\n',
    )
    write(tmp_path, "app/__init__.py", "")
    write(
        tmp_path,
        "app/cli.py",
        """\
        import torch
        from app.registry import backends

        def at_least(major):
            def check(q):
                return torch.cuda.get_device_capability() >= (major, 0)
            return check

        def shared(major):
            def check(q):
                return torch.cuda.get_device_capability() >= (major, 0)
            return check

        @backends.register("fa3", constraints=[at_least(9)])
        def fa3(q):
            return q

        @backends.register("native", constraints=[shared(8)])
        def native(q):
            return q

        def main():
            shared(7)
        """,
    )
    write(tmp_path, "app/registry.py", "backends = None\n")
    paths = ["pyproject.toml", "app/__init__.py", "app/cli.py", "app/registry.py"]
    layout = r.analyze(tmp_path, paths)
    sites, _ = r.sites_of(
        [finding("ROC110", "app/cli.py", 6), finding("ROC110", "app/cli.py", 11)], layout
    )
    only_opt_in, also_core = sites
    # `check` is never called by name: whoever calls its factory runs it.
    assert only_opt_in.role == r.OPT_IN
    assert only_opt_in.opt_in == "`at_least` is called only from opt-in code"
    assert also_core.role == r.CORE and not also_core.opt_in
