/** The commands `conclave` knows, and the subcommands of `conclave migrate`. */

export const COMMANDS = ['campaign', 'run', 'status', 'watch', 'force', 'clear', 'migrate', 'demo'] as const;
export type CommandName = (typeof COMMANDS)[number];

export function isCommand(name: string): name is CommandName {
  return (COMMANDS as readonly string[]).includes(name);
}

/** The subcommands of `conclave migrate`. */
export const MIGRATE_SUBCOMMANDS = ['status'] as const;
export type MigrateSubcommand = (typeof MIGRATE_SUBCOMMANDS)[number];
