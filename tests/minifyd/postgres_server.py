# A real PostgreSQL server for a test: Debian's initdb and postgres in a scratch directory, listening
# on a Unix socket there only (no TCP), trusting local connections. As root, it runs as the postgres
# user (initdb and postgres refuse root), and it dies with the test (SIGQUIT, postgres's immediate
# shutdown, when the test process exits), as tests/support/postgres_server.cpp's does for C++ tests.
import glob
import os
import pwd
import shutil
import subprocess
import time


def find_bindir():
    """The bin directory of Debian's PostgreSQL server (/usr/lib/postgresql/N/bin), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return os.path.dirname(found[-1]) if found else None


class PostgresServer:
    def __init__(self, bindir, directory):
        self.bindir, self.directory = bindir, os.path.abspath(directory)
        shutil.rmtree(self.directory, ignore_errors=True)
        os.makedirs(self.directory)
        self.as_server_user = []
        if os.geteuid() == 0:
            postgres = pwd.getpwnam("postgres")
            os.chown(self.directory, postgres.pw_uid, postgres.pw_gid)
            self.as_server_user = ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups",
                                   "--pdeathsig=SIGQUIT", "--"]
        data = os.path.join(self.directory, "data")
        subprocess.run([*self.as_server_user, os.path.join(bindir, "initdb"), "-D", data, "--auth=trust", "-U",
                        "postgres", "-E", "UTF8", "--no-sync"], check=True, capture_output=True)
        self.log_path = os.path.join(self.directory, "server.log")
        with open(self.log_path, "a") as log:
            self.process = subprocess.Popen([*self.as_server_user, os.path.join(bindir, "postgres"), "-D", data,
                                             "-c", "listen_addresses=", "-c", "fsync=off", "-k", self.directory],
                                            stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 30
        while subprocess.run([os.path.join(bindir, "pg_isready"), "-h", self.directory, "-U", "postgres", "-q"]).returncode:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError(f"the PostgreSQL server in {self.directory} did not start:\n{self.log()}")
            time.sleep(0.05)

    def log(self):
        with open(self.log_path) as f:
            return f.read()[-4000:]

    def create_database(self, name):
        """A new database; its URL, as minifyd's --queue takes it."""
        subprocess.run([os.path.join(self.bindir, "createdb"), "-h", self.directory, "-U", "postgres", name],
                       check=True, capture_output=True)
        return f"postgresql:///{name}?host={self.directory}&user=postgres"

    def query(self, database, sql):
        """The rows of `sql`, each a list of its columns' text."""
        done = subprocess.run([os.path.join(self.bindir, "psql"), "-h", self.directory, "-U", "postgres", "-d",
                               database, "-At", "-F", "\t", "-c", sql], capture_output=True, text=True, check=True)
        return [line.split("\t") for line in done.stdout.splitlines() if line]

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(3)  # SIGQUIT
            self.process.wait(30)
