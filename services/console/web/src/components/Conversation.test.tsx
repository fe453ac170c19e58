import { describe, expect, it } from "vitest";
import { render, screen } from "@testing-library/react";
import { DataView, besideMessages } from "./Conversation";

describe("DataView", () => {
  // A chat span's inputs hold the prompt and the tools the model was offered
  // (gen_ai.tool.definitions, llm.tools): the conversation must not hide them.
  const inputs = {
    prompt: [
      { role: "system", content: "You are a weather assistant." },
      { role: "user", content: "Weather in Paris?" },
    ],
    tools: [{ type: "function", name: "get_weather" }],
  };

  it("shows the members beside the messages under the conversation", () => {
    render(<DataView value={inputs} />);
    expect(screen.getByText("You are a weather assistant.")).toBeTruthy();
    expect(document.body.textContent).toContain("tools");
    expect(document.body.textContent).toContain("get_weather");
  });

  it("finds nothing beside messages that stand alone", () => {
    expect(besideMessages(inputs.prompt)).toBeUndefined();
    expect(besideMessages({ prompt: inputs.prompt })).toBeUndefined();
    expect(besideMessages({ question: "x" })).toBeUndefined();
    expect(besideMessages(inputs)).toEqual({ tools: inputs.tools });
  });
});
