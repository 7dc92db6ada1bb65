# The bash MCP server on a NixOS system outside the hyperhive harness. mcp.nix only sets
# services.hyperhive.agent.extraMcpServers, which the harness's own modules declare (and render
# into each agent's claude config); this module declares it so mcp.nix evaluates without them.
# Import it instead of mcp.nix, never beside the harness's modules: both would declare the option.
{ lib, ... }:
{
  imports = [ ./mcp.nix ];

  options.services.hyperhive.agent.extraMcpServers = lib.mkOption {
    type = lib.types.attrsOf lib.types.anything;
    default = { };
    description = ''
      MCP servers for the agent by name, as the harness takes them ({ type, url, allowedTools }).
      Outside the harness nothing renders them: give an MCP client the url of the `bash` entry.
    '';
  };
}
