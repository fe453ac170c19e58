/** Navigation entries of the layout, in order. */
export const NAV: { to: string; label: string }[] = [
  { to: "/traces", label: "Traces" },
  { to: "/sessions", label: "Sessions" },
  { to: "/analytics", label: "Analytics" },
  { to: "/testsets", label: "Testsets" },
  { to: "/apps", label: "Applications" },
  { to: "/playground", label: "Playground" },
  { to: "/evaluators", label: "Evaluators" },
  { to: "/evaluations", label: "Evaluations" },
  { to: "/queues", label: "Annotation queues" },
  { to: "/settings/keys", label: "Settings" },
];
