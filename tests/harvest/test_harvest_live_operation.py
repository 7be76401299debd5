"""Operating live harvests: the command, the admin's resume and re-run, the task.

A local server on 127.0.0.1 answers with arXiv's real 2015 ListRecords page (the
recorded nock exchange); the arXiv politeness is lowered so nothing waits for real.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command
from django.utils import timezone
from lxml import html as lxml_html
from pytest_httpserver import HTTPServer

from harvest import services
from harvest.models import HarvestRun
from harvest.tasks import harvest_arxiv_oai_task
from tests.harvest.replay import nock_exchanges, split_path
from wovepaper.models import Paper

pytestmark = pytest.mark.django_db

LIST_2015 = "oai_pmh_nock/oaipmh-listrecords---should-list-identifiers-from-arxiv.json"
CHANGELIST = "/admin/harvest/harvestrun/"


@pytest.fixture(autouse=True)
def _quick(settings):
    settings.HARVEST_POLITENESS = {
        "arxiv": {"min_interval": 0, "max_tries": 2, "backoff_base": 0.01}
    }


@pytest.fixture
def exchange(arxiv_dir) -> dict:
    return nock_exchanges(arxiv_dir / LIST_2015)[1]


def answer_2015(server: HTTPServer, exchange: dict) -> None:
    path, query = split_path(exchange["path"])
    server.expect_ordered_request(path, query_string=query).respond_with_data(
        exchange["response"], content_type="text/xml"
    )


def failed_run(server: HTTPServer) -> HarvestRun:
    server.expect_request("/oai2").respond_with_data("down", status=503)
    run = services.harvest_arxiv_oai(
        from_date=dt.date(2015, 1, 1),
        until_date=dt.date(2015, 1, 3),
        base_url=server.url_for("/oai2"),
    )
    assert run.status == HarvestRun.Status.FAILED
    server.clear()
    return run


def harvest_2015_command(server: HTTPServer) -> None:
    call_command(
        "harvest",
        "arxiv",
        "--from",
        "2015-01-01",
        "--until",
        "2015-01-03",
        "--url",
        server.url_for("/oai2"),
        "--no-progress",
    )


def test_command_harvests_live_between_dates(server, exchange, capsys):
    answer_2015(server, exchange)
    harvest_2015_command(server)
    out = capsys.readouterr().out
    assert "2 records, 2 created, 0 updated, 0 unchanged, 0 rejected" in out
    assert set(Paper.objects.values_list("arxiv_id", flat=True)) == {
        "1412.8544",
        "hep-th/9504118",
    }


def test_command_says_how_to_resume_a_failed_run_and_resume_finishes_it(
    server, exchange, capsys
):
    server.expect_request("/oai2").respond_with_data("down", status=503)
    with pytest.raises(CommandError, match=r"failed 2 times; last: HTTP 503") as caught:
        harvest_2015_command(server)
    run = HarvestRun.objects.get()
    assert f"manage.py harvest arxiv --resume {run.pk}" in str(caught.value)
    server.clear()
    answer_2015(server, exchange)
    call_command("harvest", "arxiv", "--resume", str(run.pk), "--no-progress")
    run.refresh_from_db()
    assert run.status == HarvestRun.Status.FINISHED
    assert Paper.objects.count() == 2
    with pytest.raises(CommandError, match="has finished: nothing to resume"):
        call_command("harvest", "arxiv", "--resume", str(run.pk), "--no-progress")


def test_command_refuses_a_bad_date():
    with pytest.raises(CommandError, match="'2015-13-01' is not a date"):
        call_command("harvest", "arxiv", "--from", "2015-13-01", "--no-progress")


def test_task_without_dates_is_incremental(server, exchange, settings):
    settings.ARXIV_OAI_URL = server.url_for("/oai2")
    answer_2015(server, exchange)
    first = harvest_arxiv_oai_task.delay(
        from_date="2015-01-01", until_date="2015-01-03", then_match=False
    ).get()
    assert (first["status"], first["created"]) == ("finished", 2)
    # As the beat schedule sends it: no dates, so from the last run's until to today.
    today = timezone.now().date()
    settings.HARVEST_WINDOW_DAYS = 100_000  # one window, so one request
    server.clear()
    server.expect_ordered_request(
        "/oai2",
        query_string={
            "verb": "ListRecords",
            "metadataPrefix": "arXiv",
            "from": "2015-01-03",
            "until": today.isoformat(),
        },
    ).respond_with_data(exchange["response"], content_type="text/xml")
    second = harvest_arxiv_oai_task.delay(then_match=False).get()
    server.check_assertions()
    assert (second["status"], second["created"], second["unchanged"]) == (
        "finished",
        0,
        2,
    )


def test_admin_lists_runs_with_their_counts_and_errors(server, admin_client):
    run = failed_run(server)
    doc = lxml_html.fromstring(admin_client.get(CHANGELIST).content)
    (row,) = doc.cssselect("#result_list tbody tr")
    cells = {
        th.get("class").split()[-1].removeprefix("column-"): td.text_content().strip()
        for th, td in zip(
            doc.cssselect("#result_list thead th")[1:],
            row.cssselect("td, th")[1:],
            strict=True,
        )
    }
    assert cells["source"] == "arxiv"
    assert cells["status"] == "failed"
    for count in ("records_seen", "papers_created", "records_failed"):
        assert cells[count] == str(getattr(run, count)), count
    assert cells["error"] == run.error
    assert "failed" in run.error


def test_admin_resume_queues_a_failed_run_once_and_it_finishes(
    server, exchange, admin_client, django_capture_on_commit_callbacks
):
    run = failed_run(server)
    answer_2015(server, exchange)
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            CHANGELIST,
            {"action": "resume_selected", ACTION_CHECKBOX_NAME: [run.pk]},
            follow=True,
        )
    assert "1 queued to resume, 0 skipped" in response.content.decode()
    run.refresh_from_db()
    assert run.status == HarvestRun.Status.FINISHED
    assert Paper.objects.count() == 2
    # A finished run is not resumed again.
    response = admin_client.post(
        CHANGELIST,
        {"action": "resume_selected", ACTION_CHECKBOX_NAME: [run.pk]},
        follow=True,
    )
    assert (
        f"0 queued to resume, 1 skipped (run #{run.pk} is finished: only a failed run "
        "can be resumed)" in response.content.decode()
    )


def test_admin_rerun_asks_the_same_list_again(
    server, exchange, admin_client, django_capture_on_commit_callbacks
):
    run = failed_run(server)
    answer_2015(server, exchange)
    response = admin_client.post(
        CHANGELIST,
        {"action": "repeat_selected", ACTION_CHECKBOX_NAME: [run.pk]},
        follow=True,
    )
    assert "1 queued again, 0 skipped" in response.content.decode()
    newest = HarvestRun.objects.order_by("-pk").first()
    assert newest.pk != run.pk
    assert newest.status == HarvestRun.Status.FINISHED
    assert (newest.params["from"], newest.params["until"]) == (
        "2015-01-01",
        "2015-01-03",
    )


def test_admin_actions_need_the_operate_permission(server, client):
    run = failed_run(server)
    user = get_user_model().objects.create_user("staff", password="pw", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_harvestrun"))
    client.force_login(user)
    page = client.get(CHANGELIST).content.decode()
    assert "resume_selected" not in page
    client.post(
        CHANGELIST, {"action": "resume_selected", ACTION_CHECKBOX_NAME: [run.pk]}
    )
    run.refresh_from_db()
    assert run.status == HarvestRun.Status.FAILED
    user.user_permissions.add(Permission.objects.get(codename="operate_harvestrun"))
    user = get_user_model().objects.get(pk=user.pk)
    client.force_login(user)
    assert "resume_selected" in client.get(CHANGELIST).content.decode()


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--from", "2024-02-30"], "'2024-02-30' is not a date"),
        (["--from", "2999-01-01"], "is after until"),
        (["--ids", ","], "--ids names no arXiv id"),
    ],
)
def test_command_refuses_bad_arguments_in_one_line(args, problem):
    with pytest.raises(CommandError, match=problem):
        call_command("harvest", "arxiv", *args, "--no-progress")
    assert HarvestRun.objects.count() == 0


def test_command_refuses_a_limit_below_one():
    with pytest.raises(CommandError, match="'0' is not a whole number >= 1"):
        call_command("harvest", "semanticscholar", "--limit", "0", "--no-progress")
    assert HarvestRun.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_admin_resume_without_a_broker_says_how_the_run_ended(
    server, exchange, admin_client
):
    # Committed at once, as in the embedded default: Celery runs the task eagerly
    # inside the request, and the message says how it ended.
    run = failed_run(server)
    server.expect_request("/oai2").respond_with_data("still down", status=503)
    response = admin_client.post(
        CHANGELIST,
        {"action": "resume_selected", ACTION_CHECKBOX_NAME: [run.pk]},
        follow=True,
    )
    page = response.content.decode()
    assert "1 queued to resume, 0 skipped" in page
    assert f"ran at once: run #{run.pk} failed: arxiv: " in page
    assert "failed 2 times; last: HTTP 503" in page
    server.clear()
    answer_2015(server, exchange)
    response = admin_client.post(
        CHANGELIST,
        {"action": "resume_selected", ACTION_CHECKBOX_NAME: [run.pk]},
        follow=True,
    )
    assert f"ran at once: run #{run.pk} finished" in response.content.decode()


def test_command_names_the_run_as_it_starts(server, exchange, capsys):
    """The id is printed before the harvest runs, so a run killed outright
    (no report) can be resumed."""
    answer_2015(server, exchange)
    harvest_2015_command(server)
    run = HarvestRun.objects.get()
    lines = capsys.readouterr().out.splitlines()
    started = (
        f"run #{run.pk} started; if it stops, resume it with: "
        f"manage.py harvest arxiv --resume {run.pk}"
    )
    assert lines.index(started) < next(
        i for i, line in enumerate(lines) if line.startswith(f"run #{run.pk}: ")
    )


def test_command_on_files_names_the_run_and_says_when_a_folder_holds_none(
    arxiv_dir, tmp_path, capsys
):
    folder = arxiv_dir / "abs_files" / "ftp" / "adap-org"  # four .abs files
    call_command("harvest", "arxiv", "--dir", str(folder), "--no-progress")
    out = capsys.readouterr().out
    run = HarvestRun.objects.get()
    assert out.startswith(f"run #{run.pk} started;")
    assert f"run #{run.pk}: 4 records, 4 created" in out
    assert "  next: manage.py match proposes researchers" in out
    assert "nothing to harvest" not in out

    call_command("harvest", "arxiv", "--dir", str(tmp_path), "--no-progress")
    empty = HarvestRun.objects.latest("pk")
    assert capsys.readouterr().out.splitlines()[-2:] == [
        f"run #{empty.pk}: 0 records, 0 created, 0 updated, 0 unchanged, 0 rejected",
        f"  no arxiv files under {tmp_path.resolve()}: nothing to harvest",
    ]


def test_command_reports_a_folder_it_cannot_read(
    arxiv_dir, tmp_path, capsys, monkeypatch
):
    """A folder the walk cannot open is named in the report, not passed over
    silently; the files it can read are harvested. (Simulated: the tests run
    as root, whom file permissions do not stop.)"""
    import os

    from harvest.services import files

    source = arxiv_dir / "abs_files" / "ftp" / "adap-org" / "papers" / "9303"
    (tmp_path / "open").mkdir()
    (tmp_path / "locked").mkdir()
    for name in ("9303001.abs", "9303002.abs"):
        target = tmp_path / ("open" if name.endswith("1.abs") else "locked") / name
        target.write_bytes((source / name).read_bytes())
    real_scandir = os.scandir

    def scandir(folder):
        if str(folder).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(folder))
        return real_scandir(folder)

    monkeypatch.setattr(files.os, "scandir", scandir)
    call_command("harvest", "arxiv", "--dir", str(tmp_path), "--no-progress")

    out = capsys.readouterr().out
    run = HarvestRun.objects.get()
    assert f"run #{run.pk}: 1 records, 1 created" in out
    locked = tmp_path.resolve() / "locked"
    assert f"  skipped {locked}: folder not readable (Permission denied)" in out
    assert run.files_skipped == [
        {
            "file": str(locked),
            "reason": f"{locked}: folder not readable (Permission denied)",
        }
    ]


def test_command_file_and_dir_must_be_what_they_say(arxiv_dir, tmp_path):
    folder = arxiv_dir / "abs_files" / "ftp" / "adap-org"
    one = next(folder.rglob("*.abs"))
    with pytest.raises(CommandError, match="not a regular file"):
        call_command("harvest", "arxiv", "--file", str(folder), "--no-progress")
    with pytest.raises(CommandError, match="not a regular file"):
        call_command("harvest", "arxiv", "--file", "/dev/null", "--no-progress")
    with pytest.raises(CommandError, match="not a folder"):
        call_command("harvest", "arxiv", "--dir", str(one), "--no-progress")
    assert not HarvestRun.objects.exists()


def test_command_names_a_rejected_file_once(tmp_path, capsys):
    (tmp_path / "papers").mkdir()
    (tmp_path / "papers" / "0509037.abs").write_text("")
    call_command("harvest", "arxiv", "--dir", str(tmp_path), "--no-progress")
    name = tmp_path.resolve() / "papers" / "0509037.abs"
    assert f"  rejected {name}: empty file\n" in capsys.readouterr().out


def test_the_command_draws_a_progress_bar_of_the_files_it_harvests(
    arxiv_dir, tmp_path, capsys
):
    month = sorted((arxiv_dir / "abs_files/ftp/arxiv/papers/0704").glob("*.abs"))[:30]
    for path in month:
        (tmp_path / path.name).symlink_to(path.resolve())
    call_command("harvest", "arxiv", "--dir", str(tmp_path))
    bar = capsys.readouterr().err.replace("\r", "\n").splitlines()
    # tqdm's last frame: every file counted, out of the total counted first.
    assert any(
        line.startswith("harvest arxiv: 100%") and "30/30" in line for line in bar
    ), bar[-3:]
    assert Paper.objects.count() == 30


def _ctrl_c(*args, **kwargs):
    raise KeyboardInterrupt


def test_ctrl_c_in_a_live_harvest_closes_the_run_and_its_resume_finishes_it(
    server, exchange, monkeypatch, capsys
):
    """Ctrl-C while a live OAI-PMH list waits for its page: the command closes
    the run as failed and says how to resume it; the resume lands the page."""
    answer_2015(server, exchange)
    monkeypatch.setattr("harvest.sources.oai_pmh.oai_page_read", _ctrl_c)
    with pytest.raises(CommandError, match="interrupted \\(Ctrl-C\\)") as failed:
        harvest_2015_command(server)
    run = HarvestRun.objects.get()
    assert (run.status, run.error) == ("failed", "interrupted (Ctrl-C)")
    assert f"--resume {run.pk}" in str(failed.value)
    assert not Paper.objects.exists()
    monkeypatch.undo()
    server.clear()
    answer_2015(server, exchange)
    call_command("harvest", "arxiv", "--resume", str(run.pk), "--no-progress")
    run.refresh_from_db()
    assert (run.status, run.papers_created) == ("finished", 2)


def test_a_live_run_another_process_is_harvesting_is_refused(server, settings):
    """Resuming a live run whose harvest still runs elsewhere (its session holds
    the run's advisory lock) is refused before anything is asked."""
    from tests.sessions import second_session

    run = failed_run(server)
    other = second_session()
    try:
        other.execute("SELECT pg_advisory_lock(7301, %s)", [run.pk])
        with pytest.raises(CommandError, match="being harvested by another process"):
            call_command("harvest", "arxiv", "--resume", str(run.pk), "--no-progress")
    finally:
        other.close()
    assert not server.log
    assert not Paper.objects.exists()


def test_a_ror_harvest_does_not_send_the_operator_to_matching(arxiv_dir, capsys):
    """ROR records are organisations: no authorship to match (it said
    "next: manage.py match proposes researchers": new-user trial)."""
    folder = arxiv_dir.parent / "ror" / "ror_api_es_responses"
    call_command("harvest", "ror", "--dir", str(folder), "--no-progress")
    out = capsys.readouterr().out
    assert HarvestRun.objects.get().papers_created > 0  # institutions written
    assert "next: manage.py match" not in out
