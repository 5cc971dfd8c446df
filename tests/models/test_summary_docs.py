"""Every component of the CVXPY models carries the paper's equation in ``model_summary``, as the Pyomo ones do."""

from clusteropt.instances import broker_preset, random_worker_placement
from clusteropt.models import build_broker_regularized, build_worker_placement_cvxpy
from clusteropt.models.summary import model_summary


def test_cvxpy_worker_placement_rows_cite_their_equations():
    model = build_worker_placement_cvxpy(random_worker_placement(3, 2, seed=0))
    rows = {r["component"]: r["doc"] for r in model_summary(model)}
    assert rows["workers_limit"].startswith("(2)") and rows["capacity"].startswith("(4)")
    assert rows["objective"].startswith("maximize")


def test_cvxpy_broker_regularized_every_component_documented():
    for form in ("tight", "bigm"):
        rows = model_summary(build_broker_regularized(broker_preset("tiny", seed=0), 2, price_form=form))
        assert all(r["doc"] for r in rows), [r["component"] for r in rows if not r["doc"]]
        docs = {r["component"]: r["doc"] for r in rows}
        assert docs["objective"].startswith("(10)")
        assert all(docs[k].startswith(f"({k})") for k in ("8a", "8b", "8e", "8f", "8g", "8i", "8j"))
