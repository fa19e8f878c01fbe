/**
 * A reward as the UI shows it: the number, coloured and labelled by what it means, so a 0 never
 * looks like a 1. Colour is not the only cue: the label says it in words.
 */
export type Grade = "pass" | "partial" | "fail" | "none";

/** Full marks (1 or more) pass, 0 or less fails, anything between is partial credit; null was not scored. */
export function gradeOf(reward: number | null | undefined): Grade {
  if (reward === null || reward === undefined || !Number.isFinite(reward)) return "none";
  if (reward >= 1) return "pass";
  if (reward <= 0) return "fail";
  return "partial";
}

const LABEL: Record<Grade, string> = { pass: "full marks", partial: "partial credit", fail: "no credit", none: "not scored" };

export function Reward({ value, text, testId }: { value: number | null | undefined; text: string; testId: string }) {
  const grade = gradeOf(value);
  return (
    <>
      <output className={`reward grade-${grade}`} data-testid={testId} data-grade={grade}>{text}</output>
      <span className={`grade grade-${grade}`}>{LABEL[grade]}</span>
    </>
  );
}
