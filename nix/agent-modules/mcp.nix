# The bash MCP server of an agent container: hive-bash-daemon as a systemd service, registered
# with the harness as the `bash` MCP server (tools mcp__bash__run, mcp__bash__status, mcp__bash__kill).
#
# Registration is a default, not a grant. extraMcpServers.bash is set with lib.mkDefault, so an
# agent's own configuration can override the entry or drop it. And even where the entry is present,
# the harness renders it into the agent's claude config only when the agent holds the `execution`
# permission (extra_server_required_permission in hive-agent/src/mcp_config.rs): an agent without
# `execution` gets no mcp__bash__* tools at all. The harness rewrites that config every turn, so a
# change of permission applies at the next turn. This module cannot see the permission; the daemon
# runs either way and simply goes unused.
#
# The harness's own modules declare services.hyperhive.agent.extraMcpServers; this module only sets
# it. Outside the harness, import ./standalone.nix instead, which declares it.
{
  config,
  lib,
  pkgs,
  ...
}:
let
  cfg = config.services.hyperhive.agent.mcp;
  host = "127.0.0.1";

  daemonArgs = [
    "--host"
    host
    "--port"
    (toString cfg.bashHttpPort)
    "--state-dir"
    cfg.bashStateDir
  ]
  ++ lib.optionals (cfg.bashAgentSocket != null) [
    "--agent-socket"
    cfg.bashAgentSocket
  ]
  ++ lib.optionals (cfg.bashDefaultSandbox != null) [
    "--default-sandbox"
    cfg.bashDefaultSandbox
  ]
  ++ lib.optionals (cfg.bashSandboxFloor != null) [
    "--sandbox-floor"
    cfg.bashSandboxFloor
  ]
  ++ lib.optionals (cfg.bashPolicyFile != null) [
    "--policy"
    cfg.bashPolicyFile
    "--policy-ask-timeout"
    (toString cfg.bashPolicyAskTimeout)
  ]
  ++ lib.optionals (cfg.bashTasksMayCall != null) [
    "--tasks-may-call"
    cfg.bashTasksMayCall
  ]
  ++ cfg.bashExtraArgs;

  stateUnderVarLib = lib.hasPrefix "/var/lib/" cfg.bashStateDir;
in
{
  options.services.hyperhive.agent.mcp = {
    bashHttpPort = lib.mkOption {
      type = lib.types.port;
      default = 7433;
      description = "Loopback port the daemon serves MCP on (http://127.0.0.1:PORT/mcp); 7433 is the daemon's own default.";
    };

    bashNpmRegistry = lib.mkOption {
      type = lib.types.str;
      description = "Base URL of the npm registry the default package fetches the locked dependencies from; needed only when bashPackage is left at its default.";
    };

    bashNodejs = lib.mkOption {
      type = lib.types.package;
      default = pkgs.nodejs_22;
      defaultText = lib.literalExpression "pkgs.nodejs_22";
      example = lib.literalExpression "pkgs.nodejs_24";
      description = ''
        The Node.js the default package compiles its native parts against and runs on: Node 20, 22,
        24 or 26 are supported (nixpkgs marks nodejs_20 insecure since its end of life). Needed only
        when bashPackage is left at its default.
      '';
    };

    bashPackage = lib.mkOption {
      type = lib.types.package;
      default = pkgs.callPackage ../package.nix {
        npmRegistry = cfg.bashNpmRegistry;
        nodejs = cfg.bashNodejs;
      };
      defaultText = lib.literalExpression "pkgs.callPackage ./nix/package.nix { npmRegistry = cfg.bashNpmRegistry; nodejs = cfg.bashNodejs; }";
      description = "The hive-bash-daemon package; its bin/hive-bash-daemon is started.";
    };

    bashStateDir = lib.mkOption {
      type = lib.types.str;
      default = "/var/lib/hive-bash-daemon";
      description = ''
        The daemon's --state-dir: the task registry, and each task's output in
        harness/bash-tasks/<id>.out and .err beneath it. Under /var/lib it is the
        service's StateDirectory; elsewhere the daemon creates it.
      '';
    };

    bashAgentSocket = lib.mkOption {
      type = lib.types.nullOr lib.types.str;
      default = null;
      example = "/run/hyperhive/agent.sock";
      description = ''
        The harness's todo socket (HIVE_AGENT_SOCKET), passed as --agent-socket. With null the
        daemon still serves; todos wait in its outbox until a socket is configured.
      '';
    };

    bashDefaultSandbox = lib.mkOption {
      type = lib.types.nullOr lib.types.str;
      default = null;
      example = ''{"write": ["/work"], "network": false}'';
      description = ''
        The daemon's --default-sandbox, as JSON like run's sandbox field: the sandbox of every run
        that gives none (Landlock for writes, a network namespace per task for network = false).
        null: none.
      '';
    };

    bashSandboxFloor = lib.mkOption {
      type = lib.types.nullOr lib.types.str;
      default = null;
      example = ''{"write": ["/work", "/tmp"], "network": false}'';
      description = ''
        The daemon's --sandbox-floor, as JSON: the widest sandbox any run may have; a run may
        narrow it, never widen it, and one that gives none (with no default) gets it. null: none.
      '';
    };

    bashPolicyFile = lib.mkOption {
      type = lib.types.nullOr lib.types.str;
      default = null;
      example = lib.literalExpression ''
        toString (pkgs.writeText "hive-bash-policy.json" (builtins.toJSON {
          default = "allow";
          rules = [ { match = [ "git" "push" "--force" ]; decision = "deny"; reason = "no force pushes"; } ];
        }))
      '';
      description = ''
        The daemon's --policy: a JSON file of rules that allow, deny or ask about every exec of
        every process of a task (docs/sandbox-and-policy.md). Checked at start: a mistake stops the
        daemon, naming the rule and field. null: no policy.
      '';
    };

    bashPolicyAskTimeout = lib.mkOption {
      type = lib.types.ints.positive;
      default = 600;
      description = ''
        The daemon's --policy-ask-timeout (with bashPolicyFile): how many seconds an exec a rule
        asks about waits for a person before it is refused.
      '';
    };

    bashTasksMayCall = lib.mkOption {
      type = lib.types.nullOr (
        lib.types.enum [
          "off"
          "same-sandbox"
        ]
      );
      default = null;
      example = "off";
      description = ''
        The daemon's --tasks-may-call: what a call to the daemon from one of its own tasks (a
        task's curl or hive-bash to 127.0.0.1) may do. "same-sandbox": anything, and a run it asks
        for is at most as wide as the calling task's sandbox; "off": nothing, every request of a
        task is refused (403). null: the daemon's default, same-sandbox.
      '';
    };

    bashUser = lib.mkOption {
      type = lib.types.str;
      default = "root";
      description = ''
        The user the daemon, and so every task, runs as. In an agent container the container is
        the boundary; set the agent's user to have tasks own what they write in its workspace.
      '';
    };

    bashWorkingDirectory = lib.mkOption {
      type = lib.types.nullOr lib.types.str;
      default = null;
      description = "Where tasks run when a call gives no cwd (the daemon's working directory); null keeps systemd's /.";
    };

    bashPath = lib.mkOption {
      type = lib.types.listOf (lib.types.either lib.types.package lib.types.str);
      default = [
        "/run/wrappers"
        pkgs.bash
        "/run/current-system/sw"
      ];
      defaultText = lib.literalExpression ''[ "/run/wrappers" pkgs.bash "/run/current-system/sw" ]'';
      description = ''
        The service's path: the daemon starts tasks with `bash -c`, and tasks see this PATH, so by
        default they find what a login shell of the container finds.
      '';
    };

    bashPrometheus = lib.mkOption {
      type = lib.types.bool;
      default = false;
      description = ''
        Registers the daemon with this host's services.prometheus (where the host runs one): the
        alerting and recording rules of deploy/prometheus/hive-bash.rules.yml, and a scrape job
        named hive-bash-daemon for its /metrics, which the rules expect. A daemon given
        --auth-token-file needs the job's authorization added in services.prometheus.scrapeConfigs.
      '';
    };

    bashExtraArgs = lib.mkOption {
      type = lib.types.listOf lib.types.str;
      default = [ ];
      example = [
        "--max-running"
        "16"
        "--default-timeout"
        "3600"
      ];
      description = "More hive-bash-daemon flags (see hive-bash-daemon --help), appended to the command line.";
    };
  };

  config = {
    systemd.services.hive-bash-daemon = {
      description = "hive-bash-daemon: shell tasks for the agent over MCP";
      wantedBy = [ "multi-user.target" ];
      after = [ "network.target" ];
      path = cfg.bashPath;

      serviceConfig = {
        ExecStart = "${cfg.bashPackage}/bin/hive-bash-daemon ${lib.escapeShellArgs daemonArgs}";
        User = cfg.bashUser;
        # Back 2 s after any exit, a clean one too (exit 0 after a SIGTERM that did not come from
        # systemd, say): the agent has no other way to its tasks. systemctl stop still stops it.
        Restart = "always";
        RestartSec = "2s";

        # A cgroup subtree of the service's own, with the memory, pids and cpu controllers, in which
        # the daemon gives each task a cgroup (kill by cgroup.kill) and its limits (memory.max,
        # pids.max, cpu.max for --task-* and a run's memory_limit_mb, max_processes, cpu_limit). The
        # daemon moves itself into a supervisor/ leaf and enables the controllers for tasks/.
        Delegate = "cpu memory pids";
        MemoryAccounting = true;
        TasksAccounting = true;
        CPUAccounting = true;

        # On stop, SIGTERM goes to the daemon alone: it ends its tasks itself (SIGTERM to each
        # task, SIGKILL after --kill-grace-ms) and records them as interrupted. Then systemd
        # SIGKILLs whatever is left in the cgroup, such as a grandchild that escaped its group.
        # control-group (the default) would SIGTERM every task at the same moment as the daemon,
        # so tasks would end as if killed from outside before the daemon could record why;
        # process would leave whatever the daemon missed running after the service has stopped.
        KillMode = "mixed";

        # A task the kernel's OOM killer ends is that task's business, not a reason to stop the
        # daemon and every other task. (continue is already systemd's default where Delegate= is
        # on; stated so that it stays if delegation goes.)
        OOMPolicy = "continue";
        # Tasks are builds (make -j, test runners); the default cap (15% of pid_max) counts them all.
        TasksMax = "infinity";

        # Hardening, limited to what no task needs: tasks are whatever the agent runs. Left out:
        # - ProtectSystem, ProtectHome, ReadWritePaths: tasks write in the workspace, the home and
        #   wherever a build puts things.
        # - PrivateTmp: the agent and its tasks share /tmp.
        # - PrivateNetwork, IPAddressDeny: downloads, tests, local servers.
        # - ProtectControlGroups: it makes the delegated cgroup subtree read-only.
        # - NoNewPrivileges, and every setting that implies it for a User without CAP_SYS_ADMIN
        #   (systemd.exec(5)): PrivateDevices, ProtectClock, ProtectHostname, ProtectKernelLogs,
        #   ProtectKernelModules, ProtectKernelTunables, RestrictAddressFamilies,
        #   RestrictNamespaces, RestrictRealtime, RestrictSUIDSGID, LockPersonality,
        #   MemoryDenyWriteExecute, SystemCallFilter, SystemCallArchitectures. Under it sudo,
        #   ping and every other setuid or file-capability program fails in a task, whatever the
        #   setting's own effect (which also hurts: /dev/kvm and /dev/fuse, JITs such as node and
        #   the JVM, nix sandboxes and bwrap, dmesg).
        # What is left: a bounding set without the four capabilities no build needs, so that not
        # even a root task (or one through sudo) loads kernel modules, reboots or sets the clock.
        CapabilityBoundingSet = "~CAP_SYS_MODULE CAP_SYS_BOOT CAP_SYS_TIME CAP_WAKE_ALARM";
      }
      // lib.optionalAttrs stateUnderVarLib {
        StateDirectory = lib.removePrefix "/var/lib/" cfg.bashStateDir;
        StateDirectoryMode = "0700";
      }
      // lib.optionalAttrs (cfg.bashWorkingDirectory != null) {
        WorkingDirectory = cfg.bashWorkingDirectory;
      };
    };

    services.hyperhive.agent.extraMcpServers.bash = lib.mkDefault {
      type = "http";
      url = "http://${host}:${toString cfg.bashHttpPort}/mcp";
      allowedTools = [ "*" ];
    };

    services.prometheus = lib.mkIf cfg.bashPrometheus {
      ruleFiles = [ ../../deploy/prometheus/hive-bash.rules.yml ];
      scrapeConfigs = [
        {
          job_name = "hive-bash-daemon";
          static_configs = [ { targets = [ "${host}:${toString cfg.bashHttpPort}" ]; } ];
        }
      ];
    };
  };
}
