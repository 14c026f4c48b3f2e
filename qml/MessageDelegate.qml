// One message of the active path: who wrote it, the collapsible reasoning, the answer as
// Markdown (code blocks apart, with a copy button), the branch switcher ‹ 2/3 › where siblings
// exist, and actions: copy, edit (user messages: makes a branch), regenerate (replies).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

Item {
    id: root
    objectName: "messageDelegate"
    required property int index
    required property var messageId
    required property string messageRole
    required property string messageText
    required property string reasoningText
    required property MessageSegmentsModel segmentModel
    required property int siblingIndex
    required property int siblingCount
    required property string messageState
    required property bool streaming
    required property string statsText
    property bool editing: false
    readonly property bool isUser: messageRole === "user"
    // Until the body is made: about as tall as it will be, so the view lays out few delegates.
    // Worked out once (not a binding: a streaming text changes every frame).
    property real estimatedBodyHeight: 24
    Component.onCompleted: {
        const lines = messageText.split("\n")
        let n = 0
        for (let i = 0; i < lines.length; ++i)
            n += Math.max(1, Math.ceil(lines[i].length * 7.5 / Math.max(200, card.availableWidth)))
        estimatedBodyHeight = n * 19 + 8
    }

    implicitHeight: card.implicitHeight + 8
    Accessible.role: Accessible.ListItem
    Accessible.name: (isUser ? qsTr("You") : qsTr("Assistant")) + ": " + messageText

    function startEdit() {
        root.editing = true
    }

    Component {
        id: reasoningComponent
        ReasoningBlock {}
    }
    Binding {
        target: reasoning.item
        property: "reasoning"
        value: root.reasoningText
        when: reasoning.item !== null
    }
    Binding {
        target: reasoning.item
        property: "streaming"
        value: root.streaming && root.messageText.length === 0
        when: reasoning.item !== null
    }
    Binding {
        target: body.item
        property: "placeholder"
        value: root.streaming && root.messageText.length === 0 && root.reasoningText.length === 0 ? "…" : ""
        when: body.item !== null
    }
    Component {
        id: editorComponent
        MessageEditor {}
    }
    Binding {
        target: editor.item
        property: "initialText"
        value: root.messageText
        when: editor.item !== null
    }
    Connections {
        target: editor.item
        ignoreUnknownSignals: true
        function onAccepted(text) {
            root.editing = false
            ChatController.editMessage(root.index, text)
        }
        function onCancelled() {
            root.editing = false
        }
    }

    Pane {
        id: card
        anchors.left: parent.left
        anchors.right: parent.right
        anchors.leftMargin: root.isUser ? 64 : 16
        anchors.rightMargin: root.isUser ? 16 : 64
        padding: 12
        background: Rectangle {
            radius: 10
            color: root.isUser ? Qt.rgba(card.palette.highlight.r, card.palette.highlight.g, card.palette.highlight.b, 0.12)
                               : card.palette.base
            border.color: root.messageState === "error" ? "#c0392b" : card.palette.mid
            border.width: 1
        }

        ColumnLayout {
            anchors.left: parent.left
            anchors.right: parent.right
            spacing: 6

            RowLayout {
                Layout.fillWidth: true
                Label {
                    text: root.isUser ? qsTr("You") : (ChatController.modelName || qsTr("Assistant"))
                    font.bold: true
                    opacity: 0.8
                }
                Label {
                    objectName: "messageStateLabel"
                    visible: root.messageState !== "complete"
                    text: root.streaming ? qsTr("writing…") : root.messageState === "interrupted" ? qsTr("stopped")
                        : root.messageState === "error" ? qsTr("failed") : root.messageState
                    font.pixelSize: 11
                    opacity: 0.7
                }
                Item { Layout.fillWidth: true }
                BranchSwitcher {
                    visible: root.siblingCount > 1
                    row: root.index
                    siblingIndex: root.siblingIndex
                    siblingCount: root.siblingCount
                }
            }

            // Made only when there is reasoning.
            Loader {
                id: reasoning
                Layout.fillWidth: true
                active: root.reasoningText.length > 0
                visible: active
                sourceComponent: reasoningComponent
            }

            // The body is made asynchronously: opening a long chat never blocks on laying out
            // every visible message in one frame; each one appears as soon as it is ready.
            Loader {
                id: body
                Layout.fillWidth: true
                Layout.preferredHeight: status === Loader.Ready ? implicitHeight : root.estimatedBodyHeight
                visible: !root.editing
                asynchronous: true
                Component.onCompleted: setSource("MessageBody.qml", { "segments": root.segmentModel })
            }

            // Made only while editing.
            Loader {
                id: editor
                Layout.fillWidth: true
                active: root.editing
                visible: active
                sourceComponent: editorComponent
            }

            RowLayout {
                Layout.fillWidth: true
                visible: !root.editing && !root.streaming
                spacing: 2
                ToolButton {
                    objectName: "copyButton"
                    text: qsTr("Copy")
                    font.pixelSize: 12
                    Accessible.name: qsTr("Copy the message")
                    onClicked: ChatController.copyText(root.messageText)
                }
                ToolButton {
                    objectName: "editButton"
                    visible: root.isUser
                    enabled: !ChatController.generating && ChatController.modelLoaded
                    text: qsTr("Edit")
                    font.pixelSize: 12
                    Accessible.name: qsTr("Edit the message (makes a branch)")
                    onClicked: root.startEdit()
                }
                ToolButton {
                    objectName: "regenerateButton"
                    visible: !root.isUser
                    enabled: !ChatController.generating && ChatController.modelLoaded
                    text: qsTr("Regenerate")
                    font.pixelSize: 12
                    Accessible.name: qsTr("Regenerate the reply (makes a sibling)")
                    onClicked: ChatController.regenerate(root.index)
                }
                Item { Layout.fillWidth: true }
                Label {
                    objectName: "messageStats"
                    text: root.statsText
                    font.pixelSize: 11
                    opacity: 0.6
                    elide: Text.ElideLeft
                    Layout.maximumWidth: card.width * 0.6
                }
            }
        }
    }
}
