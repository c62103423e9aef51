/**
 * What the playground says about each operation and field, written for someone making pictures.
 * The API reference keeps the operator's detail (limits, settings, error codes); the form's bounds
 * and defaults still come from the API's own schema (schema-form.ts).
 */

export interface OperationHelp {
  /** One line under the page title. */
  lead: string;
  /** Help per field, by its JSON name; a field without help shows none. */
  fields: Readonly<Record<string, string>>;
  /** Visible labels where the schema's name reads badly. */
  labels?: Readonly<Record<string, string>>;
}

const OUTPUT_FORMAT = "PNG keeps every detail and any transparency; JPEG gives smaller files; WebP does both.";

export const OPERATION_HELP: Readonly<Record<string, OperationHelp>> = {
  upscale: {
    lead: "Enlarge a photo and keep it sharp.",
    fields: {
      imageUrl: "The picture to enlarge: a file from your computer, or the address of one on the web.",
      scale: "How many times wider and taller the picture gets.",
      model: "Automatic picks the best enlarger for your picture and size.",
      quality: "Fast answers at once; Best takes longer for the finest detail. Only with Automatic.",
      outputFormat: OUTPUT_FORMAT,
    },
    labels: { quality: "Speed or detail" },
  },
  generate: {
    lead: "Describe a picture and let a model draw it.",
    fields: {
      prompt: "What to draw: the subject, the setting, the light.",
      width: "Leave empty for the model's usual size.",
      height: "Leave empty for the model's usual size.",
      model: "The model that draws the picture.",
      negativePrompt: "Things you do not want in the picture.",
      steps: "More steps can add detail, and take longer.",
      guidanceScale: "How strictly the picture follows your words.",
      seed: "The same number with the same settings draws the same picture again.",
      scheduler: "How the picture is worked out step by step; the model's own is usually best.",
      outputFormat: OUTPUT_FORMAT,
    },
    labels: { negativePrompt: "Avoid", guidanceScale: "Follow the words", scheduler: "Sampler" },
  },
  "style-transfer": {
    lead: "Repaint a photo in the style of a painting.",
    fields: {
      imageUrl: "The photo to repaint: a file from your computer, or the address of one on the web.",
      style: "The painting style.",
      strength: "0 keeps your photo as it is, 1 paints it fully in the style.",
      preserveColors: "Take the brushwork only and keep your photo's colours.",
      outputFormat: OUTPUT_FORMAT,
    },
    labels: { preserveColors: "Keep my colours" },
  },
  "background-remove": {
    lead: "Cut out the subject of a photo, or put something else behind it.",
    fields: {
      imageUrl: "The photo to cut out: a file from your computer, or the address of one on the web.",
      replacement: "What goes behind the subject.",
      model: "Automatic picks a model for your photo.",
      onlyMask: "Get the black-and-white outline of the subject instead of the cut-out.",
      outputFormat: OUTPUT_FORMAT,
    },
    labels: { replacement: "Background", onlyMask: "Outline only" },
  },
  "prompt-improve": {
    lead: "Turn a short idea into a detailed prompt for drawing.",
    fields: {
      prompt: "Your idea in a few words.",
      style: "A look for the picture.",
      mood: "The feeling of the picture.",
      seed: "The same number gives the same wording again.",
      variants: "How many versions to suggest.",
    },
    labels: { prompt: "Idea" },
  },
};
