/**
 * tmux 3.3's options as data: every built-in option's scope, type and default, in the order tmux
 * keeps its table (the order `show-options` prints them in). Recorded from tmux 3.3a's own
 * `show-options -s`, `-g` and `-gw` on an empty configuration; the types and choices are those tmux
 * validates values against.
 */

/** Where an option lives: the server, sessions (with global defaults), windows, or windows and panes. */
export type OptionScope = 'server' | 'session' | 'window' | 'pane';

type OptionType = 'string' | 'number' | 'flag' | 'choice' | 'colour' | 'style' | 'key' | 'array';

export interface OptionEntry {
  readonly name: string;
  /** 'pane' options live on windows and may be set on a pane too (set-option -p). */
  readonly scope: OptionScope;
  readonly type: OptionType;
  readonly default: string | readonly string[];
  readonly choices?: readonly string[];
}

export const OPTION_TABLE: readonly OptionEntry[] = [
  { name: "backspace", scope: 'server', type: 'key', default: "C-?" },
  { name: "buffer-limit", scope: 'server', type: 'number', default: "50" },
  { name: "command-alias", scope: 'server', type: 'array', default: ["split-pane=split-window", "splitp=split-window", "server-info=show-messages -JT", "info=show-messages -JT", "choose-window=choose-tree -w", "choose-session=choose-tree -s"] },
  { name: "copy-command", scope: 'server', type: 'string', default: "" },
  { name: "default-terminal", scope: 'server', type: 'string', default: "tmux-256color" },
  { name: "editor", scope: 'server', type: 'string', default: "/usr/bin/vi" },
  { name: "escape-time", scope: 'server', type: 'number', default: "500" },
  { name: "exit-empty", scope: 'server', type: 'flag', default: "on" },
  { name: "exit-unattached", scope: 'server', type: 'flag', default: "off" },
  { name: "extended-keys", scope: 'server', type: 'choice', default: "off", choices: ["off", "on", "always"] },
  { name: "focus-events", scope: 'server', type: 'flag', default: "off" },
  { name: "history-file", scope: 'server', type: 'string', default: "" },
  { name: "message-limit", scope: 'server', type: 'number', default: "1000" },
  { name: "prompt-history-limit", scope: 'server', type: 'number', default: "100" },
  { name: "set-clipboard", scope: 'server', type: 'choice', default: "external", choices: ["off", "external", "on"] },
  { name: "terminal-overrides", scope: 'server', type: 'array', default: [] },
  { name: "terminal-features", scope: 'server', type: 'array', default: ["xterm*:clipboard:ccolour:cstyle:focus:title", "screen*:title"] },
  { name: "user-keys", scope: 'server', type: 'array', default: [] },
  { name: "activity-action", scope: 'session', type: 'choice', default: "other", choices: ["none", "any", "current", "other"] },
  { name: "assume-paste-time", scope: 'session', type: 'number', default: "1" },
  { name: "base-index", scope: 'session', type: 'number', default: "0" },
  { name: "bell-action", scope: 'session', type: 'choice', default: "any", choices: ["none", "any", "current", "other"] },
  { name: "default-command", scope: 'session', type: 'string', default: "" },
  { name: "default-shell", scope: 'session', type: 'string', default: "/bin/sh" },
  { name: "default-size", scope: 'session', type: 'string', default: "80x24" },
  { name: "destroy-unattached", scope: 'session', type: 'flag', default: "off" },
  { name: "detach-on-destroy", scope: 'session', type: 'choice', default: "on", choices: ["off", "on", "no-detached"] },
  { name: "display-panes-active-colour", scope: 'session', type: 'colour', default: "red" },
  { name: "display-panes-colour", scope: 'session', type: 'colour', default: "blue" },
  { name: "display-panes-time", scope: 'session', type: 'number', default: "1000" },
  { name: "display-time", scope: 'session', type: 'number', default: "750" },
  { name: "history-limit", scope: 'session', type: 'number', default: "2000" },
  { name: "key-table", scope: 'session', type: 'string', default: "root" },
  { name: "lock-after-time", scope: 'session', type: 'number', default: "0" },
  { name: "lock-command", scope: 'session', type: 'string', default: "lock -np" },
  { name: "message-command-style", scope: 'session', type: 'style', default: "bg=black,fg=yellow" },
  { name: "message-style", scope: 'session', type: 'style', default: "bg=yellow,fg=black" },
  { name: "mouse", scope: 'session', type: 'flag', default: "off" },
  { name: "prefix", scope: 'session', type: 'key', default: "C-b" },
  { name: "prefix2", scope: 'session', type: 'key', default: "None" },
  { name: "renumber-windows", scope: 'session', type: 'flag', default: "off" },
  { name: "repeat-time", scope: 'session', type: 'number', default: "500" },
  { name: "set-titles", scope: 'session', type: 'flag', default: "off" },
  { name: "set-titles-string", scope: 'session', type: 'string', default: "#S:#I:#W - \"#T\" #{session_alerts}" },
  { name: "silence-action", scope: 'session', type: 'choice', default: "other", choices: ["none", "any", "current", "other"] },
  { name: "status", scope: 'session', type: 'choice', default: "on", choices: ["off", "on", "2", "3", "4", "5"] },
  { name: "status-bg", scope: 'session', type: 'colour', default: "default" },
  { name: "status-fg", scope: 'session', type: 'colour', default: "default" },
  { name: "status-format", scope: 'session', type: 'array', default: ["#[align=left range=left #{E:status-left-style}]#[push-default]#{T;=/#{status-left-length}:status-left}#[pop-default]#[norange default]#[list=on align=#{status-justify}]#[list=left-marker]<#[list=right-marker]>#[list=on]#{W:#[range=window|#{window_index} #{E:window-status-style}#{?#{&&:#{window_last_flag},#{!=:#{E:window-status-last-style},default}}, #{E:window-status-last-style},}#{?#{&&:#{window_bell_flag},#{!=:#{E:window-status-bell-style},default}}, #{E:window-status-bell-style},#{?#{&&:#{||:#{window_activity_flag},#{window_silence_flag}},#{!=:#{E:window-status-activity-style},default}}, #{E:window-status-activity-style},}}]#[push-default]#{T:window-status-format}#[pop-default]#[norange default]#{?window_end_flag,,#{window-status-separator}},#[range=window|#{window_index} list=focus #{?#{!=:#{E:window-status-current-style},default},#{E:window-status-current-style},#{E:window-status-style}}#{?#{&&:#{window_last_flag},#{!=:#{E:window-status-last-style},default}}, #{E:window-status-last-style},}#{?#{&&:#{window_bell_flag},#{!=:#{E:window-status-bell-style},default}}, #{E:window-status-bell-style},#{?#{&&:#{||:#{window_activity_flag},#{window_silence_flag}},#{!=:#{E:window-status-activity-style},default}}, #{E:window-status-activity-style},}}]#[push-default]#{T:window-status-current-format}#[pop-default]#[norange list=on default]#{?window_end_flag,,#{window-status-separator}}}#[nolist align=right range=right #{E:status-right-style}]#[push-default]#{T;=/#{status-right-length}:status-right}#[pop-default]#[norange default]", "#[align=centre]#{P:#{?pane_active,#[reverse],}#{pane_index}[#{pane_width}x#{pane_height}]#[default] }"] },
  { name: "status-interval", scope: 'session', type: 'number', default: "15" },
  { name: "status-justify", scope: 'session', type: 'choice', default: "left", choices: ["left", "centre", "right", "absolute-centre"] },
  { name: "status-keys", scope: 'session', type: 'choice', default: "emacs", choices: ["vi", "emacs"] },
  { name: "status-left", scope: 'session', type: 'string', default: "[#{session_name}] " },
  { name: "status-left-length", scope: 'session', type: 'number', default: "10" },
  { name: "status-left-style", scope: 'session', type: 'style', default: "default" },
  { name: "status-position", scope: 'session', type: 'choice', default: "bottom", choices: ["top", "bottom"] },
  { name: "status-right", scope: 'session', type: 'string', default: "#{?window_bigger,[#{window_offset_x}#,#{window_offset_y}] ,}\"#{=21:pane_title}\" %H:%M %d-%b-%y" },
  { name: "status-right-length", scope: 'session', type: 'number', default: "40" },
  { name: "status-right-style", scope: 'session', type: 'style', default: "default" },
  { name: "status-style", scope: 'session', type: 'style', default: "bg=green,fg=black" },
  { name: "update-environment", scope: 'session', type: 'array', default: ["DISPLAY", "KRB5CCNAME", "SSH_ASKPASS", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "SSH_CONNECTION", "WINDOWID", "XAUTHORITY"] },
  { name: "visual-activity", scope: 'session', type: 'choice', default: "off", choices: ["off", "on", "both"] },
  { name: "visual-bell", scope: 'session', type: 'choice', default: "off", choices: ["off", "on", "both"] },
  { name: "visual-silence", scope: 'session', type: 'choice', default: "off", choices: ["off", "on", "both"] },
  { name: "word-separators", scope: 'session', type: 'string', default: "!\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~" },
  { name: "cursor-colour", scope: 'pane', type: 'colour', default: "none" },
  { name: "cursor-style", scope: 'pane', type: 'choice', default: "default", choices: ["default", "blinking-block", "block", "blinking-underline", "underline", "blinking-bar", "bar"] },
  { name: "aggressive-resize", scope: 'window', type: 'flag', default: "off" },
  { name: "allow-passthrough", scope: 'pane', type: 'flag', default: "off" },
  { name: "allow-rename", scope: 'pane', type: 'flag', default: "off" },
  { name: "alternate-screen", scope: 'pane', type: 'flag', default: "on" },
  { name: "automatic-rename", scope: 'window', type: 'flag', default: "on" },
  { name: "automatic-rename-format", scope: 'window', type: 'string', default: "#{?pane_in_mode,[tmux],#{pane_current_command}}#{?pane_dead,[dead],}" },
  { name: "clock-mode-colour", scope: 'window', type: 'colour', default: "blue" },
  { name: "clock-mode-style", scope: 'window', type: 'choice', default: "24", choices: ["12", "24"] },
  { name: "copy-mode-match-style", scope: 'window', type: 'style', default: "bg=cyan,fg=black" },
  { name: "copy-mode-current-match-style", scope: 'window', type: 'style', default: "bg=magenta,fg=black" },
  { name: "copy-mode-mark-style", scope: 'window', type: 'style', default: "bg=red,fg=black" },
  { name: "fill-character", scope: 'window', type: 'string', default: "" },
  { name: "main-pane-height", scope: 'window', type: 'number', default: "24" },
  { name: "main-pane-width", scope: 'window', type: 'number', default: "80" },
  { name: "mode-keys", scope: 'window', type: 'choice', default: "emacs", choices: ["vi", "emacs"] },
  { name: "mode-style", scope: 'window', type: 'style', default: "bg=yellow,fg=black" },
  { name: "monitor-activity", scope: 'window', type: 'flag', default: "off" },
  { name: "monitor-bell", scope: 'window', type: 'flag', default: "on" },
  { name: "monitor-silence", scope: 'window', type: 'number', default: "0" },
  { name: "other-pane-height", scope: 'window', type: 'number', default: "0" },
  { name: "other-pane-width", scope: 'window', type: 'number', default: "0" },
  { name: "pane-active-border-style", scope: 'window', type: 'style', default: "#{?pane_in_mode,fg=yellow,#{?synchronize-panes,fg=red,fg=green}}" },
  { name: "pane-base-index", scope: 'window', type: 'number', default: "0" },
  { name: "pane-border-format", scope: 'window', type: 'string', default: "#{?pane_active,#[reverse],}#{pane_index}#[default] \"#{pane_title}\"" },
  { name: "pane-border-indicators", scope: 'window', type: 'choice', default: "colour", choices: ["off", "colour", "arrows", "both"] },
  { name: "pane-border-lines", scope: 'window', type: 'choice', default: "single", choices: ["single", "double", "heavy", "simple", "number"] },
  { name: "pane-border-status", scope: 'window', type: 'choice', default: "off", choices: ["off", "top", "bottom"] },
  { name: "pane-border-style", scope: 'window', type: 'style', default: "default" },
  { name: "pane-colours", scope: 'pane', type: 'array', default: [] },
  { name: "popup-style", scope: 'window', type: 'style', default: "default" },
  { name: "popup-border-style", scope: 'window', type: 'style', default: "default" },
  { name: "popup-border-lines", scope: 'window', type: 'choice', default: "single", choices: ["single", "double", "heavy", "simple", "rounded", "padded", "none"] },
  { name: "remain-on-exit", scope: 'pane', type: 'choice', default: "off", choices: ["off", "on", "failed"] },
  { name: "remain-on-exit-format", scope: 'pane', type: 'string', default: "Pane is dead (#{?#{!=:#{pane_dead_status},},status #{pane_dead_status},}#{?#{!=:#{pane_dead_signal},},signal #{pane_dead_signal},}, #{t:pane_dead_time})" },
  { name: "scroll-on-clear", scope: 'pane', type: 'flag', default: "on" },
  { name: "synchronize-panes", scope: 'pane', type: 'flag', default: "off" },
  { name: "window-active-style", scope: 'pane', type: 'style', default: "default" },
  { name: "window-size", scope: 'window', type: 'choice', default: "latest", choices: ["largest", "smallest", "manual", "latest"] },
  { name: "window-style", scope: 'pane', type: 'style', default: "default" },
  { name: "window-status-activity-style", scope: 'window', type: 'style', default: "reverse" },
  { name: "window-status-bell-style", scope: 'window', type: 'style', default: "reverse" },
  { name: "window-status-current-format", scope: 'window', type: 'string', default: "#I:#W#{?window_flags,#{window_flags}, }" },
  { name: "window-status-current-style", scope: 'window', type: 'style', default: "default" },
  { name: "window-status-format", scope: 'window', type: 'string', default: "#I:#W#{?window_flags,#{window_flags}, }" },
  { name: "window-status-last-style", scope: 'window', type: 'style', default: "default" },
  { name: "window-status-separator", scope: 'window', type: 'string', default: " " },
  { name: "window-status-style", scope: 'window', type: 'style', default: "default" },
  { name: "wrap-search", scope: 'window', type: 'flag', default: "on" },
  { name: "xterm-keys", scope: 'window', type: 'flag', default: "on" },
];

const BY_NAME = new Map(OPTION_TABLE.map((o) => [o.name, o]));

/** The built-in option called `name`, or undefined. */
export function optionEntry(name: string): OptionEntry | undefined {
  return BY_NAME.get(name);
}

/** Numeric limits tmux enforces (the rest run from 0 to INT_MAX). */
export const NUMBER_LIMITS: Readonly<Record<string, readonly [number, number]>> = {
  'buffer-limit': [1, 2_147_483_647],
  'message-limit': [0, 2_147_483_647],
  'status-interval': [0, 2_147_483_647],
  'pane-base-index': [0, 32_767],
  'base-index': [0, 2_147_483_647],
  'main-pane-height': [1, 2_147_483_647],
  'main-pane-width': [1, 2_147_483_647],
  'display-time': [0, 2_147_483_647],
  'history-limit': [0, 2_147_483_647],
  'repeat-time': [0, 32_767],
  'status-left-length': [0, 32_767],
  'status-right-length': [0, 32_767],
};
