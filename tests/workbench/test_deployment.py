"""docker-compose.yml (not run in CI): every service's command points at something real."""

import importlib.util
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def module_exists(dotted):
    return importlib.util.find_spec(dotted) is not None


def test_compose_has_web_worker_postgres_and_redis():
    services = COMPOSE["services"]
    assert set(services) >= {"web", "worker", "db", "redis"}
    assert services["db"]["image"].startswith("postgres")
    assert services["redis"]["image"].startswith("redis")


def test_web_runs_gunicorn_on_the_projects_wsgi_app():
    command = COMPOSE["services"]["web"]["command"]
    assert "gunicorn" in command
    target = next(part for part in command.split() if ":application" in part)
    assert module_exists(target.split(":")[0])


def test_worker_runs_celery_on_the_projects_app():
    command = COMPOSE["services"]["worker"]["command"].split()
    assert command[:2] == ["celery", "-A"] and module_exists(command[2])
    assert "worker" in command


def test_services_are_configured_by_environment_only():
    for name in ("web", "worker"):
        env = COMPOSE["services"][name]["environment"]
        assert {"DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY"} <= set(env)
        assert "volumes" not in COMPOSE["services"][name] or all(
            not str(v).endswith(".py") for v in COMPOSE["services"][name]["volumes"])


def test_the_image_is_built_from_a_dockerfile_in_the_project():
    build = COMPOSE["services"]["web"]["build"]
    context = ROOT / (build if isinstance(build, str) else build.get("context", "."))
    assert (context / "Dockerfile").is_file()


def worker_services():
    return {name: service for name, service in COMPOSE["services"].items()
            if name.startswith("worker")}


def test_every_queue_group_has_a_worker_and_every_worker_the_object_store():
    from workbench import queues

    consumed = set()
    for name, service in worker_services().items():
        command = service["command"].split()
        assert command[:3] == ["celery", "-A", "workbench"] and "worker" in command
        consumed |= set(command[command.index("-Q") + 1].split(","))
        env = service["environment"]
        assert {"DATABASE_URL", "REDIS_URL", "WORKBENCH_S3_BUCKET",
                "WORKBENCH_S3_ENDPOINT_URL"} <= set(env), name
    assert set(queues.all_queues("workbench")) <= consumed
    assert COMPOSE["services"]["web"]["environment"]["WORKBENCH_S3_ENDPOINT_URL"].startswith(
        "http://objects:")
    assert "seaweedfs" in COMPOSE["services"]["objects"]["image"]


def test_workers_weigh_less_than_the_web_for_the_cpu():
    """Niceness counts only inside a container's group: between containers the CPU goes by
    weight (1024 unless set), so a worker container would take as much as the web's."""
    for name, service in worker_services().items():
        assert service.get("cpu_shares", 1024) < COMPOSE["services"]["web"].get(
            "cpu_shares", 1024), name
