//! Debian's `docker-registry` (a real OCI registry) on a loopback port, for tests that push
//! and pull charts. The binary comes from `$REGISTRY` or `PATH` (`.ci/install-tools`).

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running registry with storage in a scratch folder; dropping it stops the process and
/// removes the folder.
pub struct Registry {
    child: Child,
    address: String,
    dir: PathBuf,
}

impl Registry {
    /// The `docker-registry` binary: `$REGISTRY`, else the first on `PATH`.
    pub fn binary() -> Option<PathBuf> {
        if let Ok(path) = std::env::var("REGISTRY") {
            return Some(PathBuf::from(path));
        }
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join("docker-registry"))
                .find(|p| p.is_file())
        })
    }

    /// The binary, or `None` after printing why the calling test is skipped; under
    /// `CI=true` a missing binary fails the test instead.
    pub fn binary_or_skip() -> Option<PathBuf> {
        let found = Self::binary();
        if found.is_none() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true but docker-registry is missing (apt-get install -y docker-registry)"
            );
            eprintln!(
                "skipped: no docker-registry binary (set REGISTRY or apt-get install docker-registry)"
            );
        }
        found
    }

    /// Starts `binary` on a free loopback port and waits until it accepts connections.
    pub fn start(binary: &Path) -> std::io::Result<Self> {
        Self::start_with_htpasswd(binary, "")
    }

    /// Like [`Registry::start`], demanding the logins of `htpasswd` (bcrypt lines, as
    /// `htpasswd -B` writes them) unless it is empty.
    pub fn start_with_htpasswd(binary: &Path, htpasswd: &str) -> std::io::Result<Self> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let address = format!("127.0.0.1:{port}");
        let dir =
            std::env::temp_dir().join(format!("testbed-registry-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let auth = if htpasswd.is_empty() {
            String::new()
        } else {
            let file = dir.join("htpasswd");
            std::fs::write(&file, htpasswd)?;
            format!(
                "auth:\n  htpasswd:\n    realm: test\n    path: {}\n",
                file.display()
            )
        };
        let config = dir.join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n{auth}http:\n  addr: {address}\n",
                dir.join("data").display()
            ),
        )?;
        let child = Command::new(binary)
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let registry = Self {
            child,
            address,
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(&registry.address).is_err() {
            if Instant::now() > deadline {
                return Err(std::io::Error::other(format!(
                    "docker-registry did not start on {}",
                    registry.address
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(registry)
    }

    /// `127.0.0.1:PORT`, the registry part of references (plain HTTP).
    pub fn address(&self) -> &str {
        &self.address
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
