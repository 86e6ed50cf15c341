# A shell with real Batsim 4.2, batexpe's robin and pybatsim (from the kapack
# channel, oar-team/nur-kapack) plus batloc, to run batloc's schedulers and
# analysis against the reference simulator.
#
#   nix develop ./nix        # from the repository root
#
# Untested here: it needs network access to GitHub and the Nix caches (see
# README.md beside this file). `nix flake lock` pins every input on first use;
# commit the resulting flake.lock to make the shell reproducible.
{
  description = "batloc with real Batsim 4.2, batexpe (robin) and pybatsim";

  inputs = {
    nixpkgs.url = "github:NixOS/nixpkgs/nixos-24.05";
    flake-utils.url = "github:numtide/flake-utils";
    kapack = {
      # batsim-420 and batexpe are commented out on some revisions of
      # nur-kapack: pin one where `nix eval ./nix#batsim.version` gives 4.2.x.
      url = "github:oar-team/nur-kapack/master";
      inputs.nixpkgs.follows = "nixpkgs";
      inputs.flake-utils.follows = "flake-utils";
    };
  };

  outputs = { self, nixpkgs, flake-utils, kapack }:
    flake-utils.lib.eachSystem [ "x86_64-linux" "aarch64-linux" ] (system:
      let
        pkgs = import nixpkgs { inherit system; };
        kpkgs = kapack.packages.${system};
        python = pkgs.python311;
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
            kpkgs.batsim-420   # `batsim` 4.2 on SimGrid 3.34
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
