import pytest


@pytest.fixture(scope="session")
def dask_client():
    """A two-worker Dask LocalCluster on 127.0.0.1, started and stopped by the tests."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                                       dashboard_address=None, processes=True)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()
