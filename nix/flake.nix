# A shell with real Batsim 4.2, batexpe's robin and pybatsim (from the kapack
# channel, oar-team/nur-kapack) plus batloc, to run batloc's schedulers and
# analysis against the reference simulator.
#
#   nix develop ./nix        # from the repository root
#
# Not evaluated here (no Nix, no network to GitHub or the Nix caches): every
# input is pinned to a commit, so the pins can be checked by reading them
# (nix/README.md says how they were chosen). `nix flake lock` then records
# their hashes in flake.lock; commit it.
{
  description = "batloc with real Batsim 4.2, batexpe (robin) and pybatsim";

  inputs = {
    # The nixpkgs nur-kapack's own flake.lock pins at the revision below
    # (branch-off-24.11, 2024-11-14): the one its packages were built against.
    nixpkgs.url = "github:NixOS/nixpkgs/8b27c1239e5c421a2bbc2c65d52e4a6fbf2ff296";
    flake-utils.url = "github:numtide/flake-utils/11707dc2f618dd54ca8739b309ec4fc024de578b";
    kapack = {
      # nur-kapack dc8a649 (2025-05-16, "[oar] add Perl as depedency"): the last
      # revision with batsim-420, batexpe, pybatsim (3.2.1) and evalys all
      # defined. The next one (8db1fb7) neutralises batexpe; 9e0efa7 comments
      # simgrid and batsim out.
      url = "github:oar-team/nur-kapack/dc8a64946d30e52ec648c9d148c7d691844849a3";
      inputs.nixpkgs.follows = "nixpkgs";
      inputs.flake-utils.follows = "flake-utils";
    };
  };

  outputs = { self, nixpkgs, flake-utils, kapack }:
    flake-utils.lib.eachSystem [ "x86_64-linux" "aarch64-linux" ] (system:
      let
        pkgs = import nixpkgs { inherit system; };
        kpkgs = kapack.packages.${system};
        # kapack's Python packages (pybatsim, evalys) are built with nixpkgs'
        # default python3; batloc's environment must use the same interpreter.
        python = pkgs.python3;
        py = python.pkgs;

        # batloc itself; its embedded engine needs SimGrid's Python bindings,
        # which nixpkgs' simgrid builds when asked to.
        simgrid = pkgs.simgrid.override { buildPythonBindings = true; python3 = python; };
        batloc = py.buildPythonPackage {
          pname = "batloc";
          version = "0.1.0";
          pyproject = true;
          src = ./..;
          build-system = [ py.setuptools py.wheel ];
          dependencies = [
            py.pyzmq py.numpy py.pandas py.matplotlib py.pyyaml py.sortedcontainers py.docopt
            # procset is in nixpkgs; evalys is taken from kapack (nixpkgs has none)
            py.procset kpkgs.evalys
          ];
          # the simgrid wheel is provided by the Nix simgrid package, not pip
          pythonRemoveDeps = [ "simgrid" ];
          propagatedBuildInputs = [ simgrid ];
          doCheck = false;
        };
        pythonEnv = python.withPackages (ps: [ batloc ps.pytest ]);
      in {
        packages = {
          inherit batloc;
          batsim = kpkgs.batsim-420;
          default = batloc;
        };

        devShells.default = pkgs.mkShell {
          name = "batloc-batsim-4.2";
          # Order matters for PATH: batexpe's `robin` shadows batloc's robin
          # script; batloc's stays reachable as `python -m batloc.cli.robin`.
          packages = [
            kpkgs.batsim-420   # `batsim` 4.2.0 on SimGrid 3.34
            kpkgs.batexpe      # `robin` (Go), the reference experiment runner
            kpkgs.pybatsim     # `pybatsim` launcher and stock schedulers
            pythonEnv          # batloc (schedulers, analysis, embedded engine)
          ];
          shellHook = ''
            echo "batloc shell: $(batsim --version 2>/dev/null | head -n1) | batexpe robin | pybatsim"
            echo "  real Batsim:   robin ./nix/real-batsim.example.yaml   (see nix/README.md)"
          '';
        };
      });
}
